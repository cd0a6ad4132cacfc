#pragma once
// The error hierarchy of calbench. The library throws; only the runner catches and maps an
// error to an exit status (config and input errors: 2).
#include <stdexcept>
#include <string>
#include <vector>

namespace calbench {

// A parameter of a domain object is out of its range (alpha <= 0, temperature <= 0, ...).
// The message names the parameter, the value and the rule, e.g.
// "temperature = -1: must be > 0". The config layer prefixes file and JSON pointer.
class DomainError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Every problem found in one config file, reported together.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const noexcept { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// A data file (calbench eval, reference data) that cannot be read as promised.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run stopped on request (its stop flag, set by SIGINT or SIGTERM) before it finished; the
// results of the tasks that finished are in its journal (core/journal.hpp).
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

}  // namespace calbench
