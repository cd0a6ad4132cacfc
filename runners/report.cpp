#include "runners/report.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string_view>

#include "runners/command.hpp"

extern char** environ;

namespace calbench {
namespace {

#ifndef CALBENCH_PYTHON3
#define CALBENCH_PYTHON3 "python3"
#endif
#ifndef CALBENCH_PYTHON_DIR
#define CALBENCH_PYTHON_DIR ""
#endif

// Python runs isolated (-I: no working directory, no user site-packages, no PYTHON*
// variables on the import path), so a numpy.py or calbench/ beside the user's config is never
// imported. The package's directories come as the first argument instead, absolute paths
// joined by ':' (child_python_path), and go first on sys.path.
// Exit 3 with the missing module's name when an import fails, so the runner can tell "not
// installed" (a warning) from a failure of the report itself.
constexpr const char* bootstrap =
    "import sys\n"
    "sys.path[:0] = [p for p in sys.argv[1].split(':') if p.startswith('/')]\n"
    "try:\n"
    "    import numpy, pandas, matplotlib\n"
    "    import calbench.report\n"
    "except ImportError as e:\n"
    "    print(f'python module {e.name} not found', file=sys.stderr)\n"
    "    sys.exit(3)\n"
    "sys.exit(calbench.report.main(sys.argv[2:]))\n";

std::string interpreter() {
  const char* env = std::getenv("CALBENCH_PYTHON");
  if (env != nullptr && *env != '\0') return env;
  return CALBENCH_PYTHON3;
}

// Where the child finds the calbench package: this checkout's python/, then the absolute
// entries of $PYTHONPATH (an empty or relative entry would name the working directory, which
// isolated mode keeps off the import path on purpose).
std::string child_python_path() {
  std::string out;
  const std::string own = CALBENCH_PYTHON_DIR;
  if (!own.empty() && std::filesystem::is_directory(own)) out = own;
  const char* env = std::getenv("PYTHONPATH");
  std::string_view rest = env == nullptr ? "" : env;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view entry = rest.substr(0, colon);
    if (!entry.empty() && entry.front() == '/') {
      // append, not `":" + entry`: GCC 12 warns falsely (-Wrestrict, bug 105329) about that.
      if (!out.empty()) out.append(1, ':');
      out.append(entry);
    }
    rest = colon == rest.npos ? std::string_view() : rest.substr(colon + 1);
  }
  return out;
}

// The environment of the child: ours, with matplotlib's non-interactive backend.
std::vector<std::string> child_environment() {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("MPLBACKEND=", 0) != 0) out.push_back(entry);
  }
  out.push_back("MPLBACKEND=Agg");
  return out;
}

std::string last_lines(const std::string& text, std::size_t count) {
  std::size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  std::size_t start = end;
  for (std::size_t found = 0; start > 0 && found < count; --start)
    if (text[start - 1] == '\n' && ++found == count) break;
  return text.substr(start, end - start);
}

}  // namespace

bool reports_disabled_by_environment() {
  const char* env = std::getenv("CALBENCH_NO_REPORT");
  return env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
}

ReportOutcome run_report_module(const std::vector<std::string>& args) {
  const std::string python = interpreter();
  std::vector<std::string> argv_text = {python, "-I", "-B", "-c", bootstrap, child_python_path()};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = child_environment();
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  // The child's stdout and stderr into one pipe: the report prints its path, or its error.
  int fds[2];
  if (::pipe(fds) != 0) return {ReportStatus::failed, std::string("pipe: ") + std::strerror(errno)};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  const int spawned =
      ::posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    return {ReportStatus::unavailable, python + " not found (" + std::strerror(spawned) + ")"};
  }
  std::string output;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(fds[0], buffer, sizeof buffer);
    if (got > 0) {
      output.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {ReportStatus::written, ""};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
    return {ReportStatus::unavailable, python + ": " + last_lines(output, 1)};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return {ReportStatus::unavailable, python + " could not be run"};
  return {ReportStatus::failed, last_lines(output, 6)};
}

int write_report(const std::filesystem::path& dir, bool quiet, std::vector<std::string> options) {
  options.push_back(dir.string());
  const ReportOutcome outcome = run_report_module(options);
  if (outcome.status == ReportStatus::written) {
    const std::filesystem::path page =
        options.size() > 1 ? dir / "index.html" : dir / "report" / "index.html";
    if (!quiet) std::cout << "report: " << page.string() << '\n';
    return 0;
  }
  if (outcome.status == ReportStatus::unavailable) {
    warn("calbench", "no HTML report: " + outcome.message +
                         " (scripts/setup.sh installs python3-matplotlib); the results are in " +
                         dir.string());
    return 0;
  }
  std::cerr << "calbench: the HTML report failed (the results in " << dir.string()
            << " are complete):\n"
            << outcome.message << '\n';
  return 1;
}

}  // namespace calbench
