#include "core/child_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <thread>

#include "core/stop_request.hpp"

extern char** environ;

namespace calbench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kErrTail = 64 * 1024;
constexpr auto kStopGrace = std::chrono::seconds(2);
constexpr auto kDrainGrace = std::chrono::seconds(1);
constexpr std::string_view kMarkName = "CALBENCH_CHILD_ID=";

// argv[0] resolved as execvp would, before fork: the child may only make async-signal-safe
// calls, and execvp's search allocates.
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (;;) {
    const std::size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos) return "";
    rest.remove_prefix(colon + 1);
  }
}

// Every process of this user whose initial environment holds `mark` (a NUL-terminated entry
// of /proc/PID/environ), killed with SIGKILL; repeated until a pass finds none, since one may
// fork while we look. Returns nothing: a process we cannot read is not ours.
void kill_marked(const std::string& mark) {
  for (int pass = 0; pass < 20; ++pass) {
    bool found = false;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return;
    while (const dirent* entry = ::readdir(proc)) {
      const char* name = entry->d_name;
      if (name[0] < '1' || name[0] > '9') continue;
      const std::string file = std::string("/proc/") + name + "/environ";
      const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      std::string env;
      char buffer[4096];
      for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;)
        env.append(buffer, static_cast<std::size_t>(got));
      ::close(fd);
      // Entries are NUL-terminated: look for the whole entry, NUL on both sides.
      const std::string haystack = std::string(1, '\0') + env + '\0';
      if (haystack.find(std::string(1, '\0') + mark + '\0') != std::string::npos) {
        ::kill(static_cast<pid_t>(std::atol(name)), SIGKILL);
        found = true;
      }
    }
    ::closedir(proc);
    if (!found) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      read = fds[0];
      write = fds[1];
    }
  }
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
  void close_read() {
    if (read >= 0) ::close(read);
    read = -1;
  }
};

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& args, const ChildLimits& limits) {
  ChildOutcome outcome;
  const std::string program = args.empty() ? "" : resolve_program(args[0]);
  if (program.empty()) {
    outcome.code = ENOENT;
    return outcome;
  }
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  static std::atomic<unsigned long> counter{0};
  const std::string mark =
      std::string(kMarkName) + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::string_view(*e).rfind(kMarkName, 0) != 0) env_text.emplace_back(*e);
  env_text.push_back(mark);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  Pipe out, err;
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out.read < 0 || err.read < 0 || null_fd < 0) {
    outcome.code = errno;
    if (null_fd >= 0) ::close(null_fd);
    return outcome;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The child: async-signal-safe calls only until execve.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::dup2(null_fd, 0);
    ::dup2(out.write, 1);
    ::dup2(err.write, 2);
    ::execve(program.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  const int fork_error = errno;
  ::close(null_fd);
  out.close_write();
  err.close_write();
  if (pid < 0) {
    outcome.code = fork_error;
    return outcome;
  }
  // Both sides set the group, so it exists before either relies on it.
  ::setpgid(pid, pid);
  register_child_group(pid);

  const auto end_all = [&](int signal) {
    ::kill(-pid, signal);
    if (signal == SIGKILL) kill_marked(mark);
  };
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(limits.timeout_seconds));
  std::optional<Clock::time_point> stop_deadline;
  std::optional<Clock::time_point> exited_at;
  std::size_t err_bytes = 0;
  bool exited = false;
  int status = 0;
  for (;;) {
    if (!exited) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) {
        exited = true;
        // Whatever it started and left running is not part of the protocol's answer.
        end_all(SIGKILL);
      }
    }
    if (exited && out.read < 0 && err.read < 0) break;
    const auto now = Clock::now();
    if (outcome.end == ChildOutcome::End::not_started) {
      if (now >= deadline) outcome.end = ChildOutcome::End::timed_out;
      if (stop_flag().load() && !stop_deadline) {
        const int signal = stop_signal_number();
        end_all(signal != 0 ? signal : SIGTERM);
        stop_deadline = now + kStopGrace;
      }
      if (stop_deadline && now >= *stop_deadline) outcome.end = ChildOutcome::End::stopped;
      if (outcome.end != ChildOutcome::End::not_started) end_all(SIGKILL);
    }
    pollfd fds[2] = {{out.read, POLLIN, 0}, {err.read, POLLIN, 0}};
    ::poll(fds, 2, exited ? 50 : 20);
    char buffer[65536];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        (i == 0 ? out : err).close_read();
        continue;
      }
      const auto n = static_cast<std::size_t>(got);
      std::size_t total = 0;
      if (i == 0) {
        outcome.out.append(buffer, std::min(n, limits.max_output_bytes + 1 - outcome.out.size()));
        total = outcome.out.size();
      } else {
        outcome.err_tail.append(buffer, n);
        if (outcome.err_tail.size() > 2 * kErrTail)
          outcome.err_tail.erase(0, outcome.err_tail.size() - kErrTail);
        err_bytes += n;
        total = err_bytes;
      }
      if (total > limits.max_output_bytes && outcome.end == ChildOutcome::End::not_started) {
        outcome.end = ChildOutcome::End::output_cap;
        outcome.capped_stream = i == 0 ? "standard output" : "standard error";
        end_all(SIGKILL);
      }
    }
    // A straggler that escaped both the group and the mark may hold a pipe open: once the
    // command has exited and been swept, its pipes get a second, then are no longer read.
    if (exited && !exited_at) exited_at = Clock::now();
    if (exited_at && Clock::now() - *exited_at > kDrainGrace) {
      out.close_read();
      err.close_read();
    }
  }
  unregister_child_group(pid);
  if (outcome.err_tail.size() > kErrTail)
    outcome.err_tail.erase(0, outcome.err_tail.size() - kErrTail);
  if (stop_deadline) outcome.end = ChildOutcome::End::stopped;
  if (outcome.end == ChildOutcome::End::not_started) {
    if (WIFSIGNALED(status)) {
      outcome.end = ChildOutcome::End::signalled;
      outcome.code = WTERMSIG(status);
    } else {
      outcome.end = ChildOutcome::End::exited;
      outcome.code = WEXITSTATUS(status);
    }
  }
  return outcome;
}

}  // namespace calbench
