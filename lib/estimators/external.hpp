#pragma once
// An estimator computed by another program (docs/external.md): calbench writes samples as NPY
// files into a fresh directory, runs the command once with that directory as its last
// argument, and reads one number per sample from its standard output.
//
// The protocol, per command start: DIR/p_RRRRRR.npy ((n, K) float64) and DIR/y_RRRRRR.npy
// ((n,) int64) for each replicate R in order (six digits, more when needed), and
// DIR/manifest.json naming them; the command prints one number per replicate, in that order,
// separated by white space, and exits with status 0. The scenario estimator_bias writes all
// replicates of one cell and starts the command once per cell; elsewhere (calbench eval,
// recalibration, Python's estimate) `estimate` starts it once per sample.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "estimators/estimator.hpp"

namespace calbench {

// A command that failed, timed out or printed what the protocol does not allow. The message
// names the estimator, the place (cell, replicate) and what went wrong.
class ExternalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A fresh directory under the system's temporary directory, PREFIX + PID + "-XXXXXX", removed
// with its contents when the object goes away; one that a killed calbench left (SIGKILL runs
// no destructor) is removed by the next TempDirectory (core/temporaries.hpp).
class TempDirectory {
 public:
  explicit TempDirectory(const std::string& prefix);
  ~TempDirectory();
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// What one command start is given besides the samples: the manifest's facts and, for
// messages, where the samples come from ("cell 3").
struct ExternalBatch {
  std::string label;  // the estimator's label in results
  std::string place;  // "cell 3" or "one sample"; messages name it
  std::size_t replicates = 0;
  std::size_t sample_size = 0;
  std::size_t classes = 0;
};

class ExternalEstimator : public Estimator {
 public:
  // Throws DomainError for an empty command, a timeout <= 0 or a max_output of 0. The command
  // runs under core/child_process.hpp's limits: killed after `timeout_seconds`, or once it
  // writes more than `max_output_bytes` to its stdout or its stderr.
  ExternalEstimator(std::vector<std::string> command, Quantity target, double timeout_seconds,
                    std::size_t max_output_bytes = kDefaultMaxOutput);
  static constexpr std::size_t kDefaultMaxOutput = std::size_t{64} << 20;

  // Starts the command on this one sample (a directory of one replicate).
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return target_; }
  // Capability: a scenario feeds it whole batches of replicates (run below).
  Capabilities capabilities() const override { return {.external = this}; }

  const std::vector<std::string>& command() const { return command_; }
  double timeout() const { return timeout_; }
  std::size_t max_output() const { return max_output_; }

  // Writes `batch.replicates`' manifest into `directory` (the samples are already there, from
  // write_replicate), starts the command once and returns its numbers in replicate order.
  // Throws ExternalError naming batch.label and batch.place on any failure.
  std::vector<double> run(const std::filesystem::path& directory, const ExternalBatch& batch) const;

 private:
  std::vector<std::string> command_;
  Quantity target_;
  double timeout_;
  std::size_t max_output_;
};

// Writes replicate r's p and y as NPY files into `directory` (protocol file names; `replicates`
// sets the digits). Safe to call from several threads for different r.
void write_replicate(const std::filesystem::path& directory, std::size_t r, std::size_t replicates,
                     const Sample& sample);

}  // namespace calbench
