#include "estimators/external.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/child_process.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/temporaries.hpp"
#include "data/npy.hpp"

namespace calbench {
namespace {

// The command as a shell would show it: arguments with spaces or quotes in single quotes.
std::string command_text(const std::vector<std::string>& command) {
  std::string out;
  for (const auto& arg : command) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    out += plain ? arg : "'" + arg + "'";
  }
  return out;
}

// The last lines of a command's standard error, indented, for a message ("" when empty).
std::string stderr_tail(const std::string& text) {
  constexpr std::size_t max_lines = 12, max_chars = 2000;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  if (lines.empty()) return " (its standard error is empty)";
  std::string out = "; the end of its standard error:";
  const std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  for (std::size_t i = first; i < lines.size(); ++i)
    out += "\n    " + lines[i].substr(0, max_chars / max_lines);
  return out;
}

// Six digits, more when there are more replicates: file names sort in replicate order.
std::string replicate_tag(std::size_t r, std::size_t replicates) {
  std::size_t digits = 6;
  for (std::size_t limit = 1'000'000; limit < replicates && digits < 20; limit *= 10) ++digits;
  std::string tag = std::to_string(r);
  return std::string(digits > tag.size() ? digits - tag.size() : 0, '0') + tag;
}

// A JSON string literal of plain text (labels, file names).
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(ch));
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

void write_manifest(const std::filesystem::path& directory, const ExternalBatch& batch,
                    Quantity target) {
  std::string files;
  for (std::size_t r = 0; r < batch.replicates; ++r) {
    const std::string tag = replicate_tag(r, batch.replicates);
    files += std::string(r > 0 ? ",\n    " : "\n    ") + "[" + json_string("p_" + tag + ".npy") +
             ", " + json_string("y_" + tag + ".npy") + "]";
  }
  std::ofstream out(directory / "manifest.json", std::ios::binary);
  out << "{\n  \"protocol\": 1,\n  \"estimator\": " << json_string(batch.label)
      << ",\n  \"place\": " << json_string(batch.place)
      << ",\n  \"target\": " << json_string(std::string(to_string(target)))
      << ",\n  \"replicates\": " << batch.replicates
      << ",\n  \"sample_size\": " << batch.sample_size << ",\n  \"classes\": " << batch.classes
      << ",\n  \"files\": [" << files << "\n  ]\n}\n";
  out.close();
  if (!out) throw std::runtime_error((directory / "manifest.json").string() + ": cannot write");
}

}  // namespace

TempDirectory::TempDirectory(const std::string& prefix) {
  // PREFIX-PID-XXXXXX: what a killed calbench left is removed by the next one to make a
  // temporary directory here (core/temporaries.hpp).
  const std::filesystem::path base = std::filesystem::temp_directory_path();
  remove_dead_temporaries(base, TemporaryKind::temporary_directory);
  std::string pattern = (base / (prefix + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot create a temporary directory " + pattern + " (" +
                             std::strerror(errno) + ")");
  path_ = pattern;
}

TempDirectory::~TempDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

ExternalEstimator::ExternalEstimator(std::vector<std::string> command, Quantity target,
                                     double timeout_seconds, std::size_t max_output_bytes)
    : command_(std::move(command)),
      target_(target),
      timeout_(timeout_seconds),
      max_output_(max_output_bytes) {
  if (command_.empty() || command_[0].empty())
    throw DomainError("command: must name a program (a non-empty array of strings)");
  if (!(timeout_ > 0.0))
    throw DomainError("timeout = " + format_double(timeout_) + ": must be > 0");
  if (max_output_ == 0) throw DomainError("max_output = 0: must be >= 1");
}

void write_replicate(const std::filesystem::path& directory, std::size_t r, std::size_t replicates,
                     const Sample& sample) {
  const std::string tag = replicate_tag(r, replicates);
  write_npy(directory / ("p_" + tag + ".npy"), {sample.size, sample.classes},
            std::span<const double>(sample.p));
  std::vector<std::int64_t> labels(sample.label.begin(), sample.label.end());
  write_npy(directory / ("y_" + tag + ".npy"), {sample.size},
            std::span<const std::int64_t>(labels));
}

std::vector<double> ExternalEstimator::run(const std::filesystem::path& directory,
                                           const ExternalBatch& batch) const {
  const std::string who = "external estimator " + json_string(batch.label) + ", " + batch.place;
  write_manifest(directory, batch, target_);
  std::vector<std::string> args = command_;
  args.push_back(directory.string());
  const ChildOutcome finished = run_child(args, {timeout_, max_output_});
  const std::string shown = "command " + command_text(command_);
  using End = ChildOutcome::End;
  switch (finished.end) {
    case End::not_started:
      throw ExternalError(who + ": cannot start " + json_string(command_[0]) + " (" +
                          std::strerror(finished.code) + ")");
    case End::stopped:
      throw Interrupted();
    case End::timed_out:
      throw ExternalError(who + ": " + shown + " did not finish within the timeout of " +
                          format_double(timeout_) + " s and was killed" +
                          stderr_tail(finished.err_tail));
    case End::output_cap:
      throw ExternalError(who + ": " + shown + " wrote more than max_output = " +
                          std::to_string(max_output_) + " bytes to its " + finished.capped_stream +
                          " and was killed (the estimator's max_output parameter sets the cap; "
                          "docs/external.md)" +
                          stderr_tail(finished.err_tail));
    case End::signalled:
      throw ExternalError(who + ": " + shown + " was killed by signal " +
                          std::to_string(finished.code) + stderr_tail(finished.err_tail));
    case End::exited:
      if (finished.code != 0)
        throw ExternalError(who + ": " + shown + " exited with status " +
                            std::to_string(finished.code) + stderr_tail(finished.err_tail));
      break;
  }
  std::vector<std::string> tokens;
  {
    std::istringstream in(finished.out);
    for (std::string token; in >> token;) tokens.push_back(token);
  }
  if (tokens.size() != batch.replicates)
    throw ExternalError(who + ": " + shown + " printed " + std::to_string(tokens.size()) +
                        " value(s) for " + std::to_string(batch.replicates) +
                        " replicate(s); the protocol is one number per replicate, in order "
                        "(docs/external.md)");
  std::vector<double> values(tokens.size());
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    const char* begin = tokens[r].c_str();
    char* end = nullptr;
    values[r] = std::strtod(begin, &end);
    const bool number = end == begin + tokens[r].size();
    if (!number || !std::isfinite(values[r]))
      throw ExternalError(who + ", replicate " + std::to_string(r) + ": " + shown + " printed " +
                          json_string(tokens[r].substr(0, 60)) +
                          (number ? ", not a finite number" : ", not a number"));
  }
  return values;
}

double ExternalEstimator::estimate(const Sample& sample, EstimatorWorkspace& /*workspace*/) const {
  const TempDirectory directory("calbench-external-");
  write_replicate(directory.path(), 0, 1, sample);
  return run(directory.path(),
             {command_text(command_), "one sample", 1, sample.size, sample.classes})[0];
}

}  // namespace calbench
