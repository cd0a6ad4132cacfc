#include "estimators/external.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/read_file.hpp"
#include "data/npy.hpp"

extern char** environ;

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

struct Finished {
  int status = 0;
  bool timed_out = false;
};

// Starts argv in its own process group with stdin from /dev/null and stdout, stderr into the
// given files; waits at most `timeout` seconds, then kills the whole group.
Finished spawn_and_wait(const std::vector<std::string>& args, const std::filesystem::path& out,
                        const std::filesystem::path& err, double timeout, const std::string& who) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (started != 0)
    throw ExternalError(who + ": cannot start " + json_string(args[0]) + " (" +
                        std::strerror(started) + ")");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  auto pause = std::chrono::microseconds(500);
  Finished result;
  while (true) {
    const pid_t done = ::waitpid(pid, &result.status, WNOHANG);
    if (done == pid) return result;
    if (done < 0 && errno != EINTR)
      throw ExternalError(who + ": waiting for the command failed (" + std::strerror(errno) + ")");
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &result.status, 0);
      result.timed_out = true;
      return result;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20'000));
  }
}

}  // namespace

TempDirectory::TempDirectory(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
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
                                     double timeout_seconds)
    : command_(std::move(command)), target_(target), timeout_(timeout_seconds) {
  if (command_.empty() || command_[0].empty())
    throw DomainError("command: must name a program (a non-empty array of strings)");
  if (!(timeout_ > 0.0))
    throw DomainError("timeout = " + format_double(timeout_) + ": must be > 0");
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
  const TempDirectory streams("calbench-external-out-");
  const auto out_file = streams.path() / "stdout", err_file = streams.path() / "stderr";
  std::vector<std::string> args = command_;
  args.push_back(directory.string());
  const Finished finished = spawn_and_wait(args, out_file, err_file, timeout_, who);
  const std::string shown = "command " + command_text(command_);
  if (finished.timed_out)
    throw ExternalError(who + ": " + shown + " did not finish within the timeout of " +
                        format_double(timeout_) + " s and was killed" +
                        stderr_tail(read_file(err_file).bytes));
  if (WIFSIGNALED(finished.status))
    throw ExternalError(who + ": " + shown + " was killed by signal " +
                        std::to_string(WTERMSIG(finished.status)) +
                        stderr_tail(read_file(err_file).bytes));
  if (!WIFEXITED(finished.status) || WEXITSTATUS(finished.status) != 0)
    throw ExternalError(who + ": " + shown + " exited with status " +
                        std::to_string(WEXITSTATUS(finished.status)) +
                        stderr_tail(read_file(err_file).bytes));
  std::vector<std::string> tokens;
  {
    std::istringstream in(read_file(out_file).bytes);
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
