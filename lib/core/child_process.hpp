#pragma once
// Another program run to its end and no further (docs/external.md, "Limits"): the external
// estimator's command. What it may cost is bounded:
//   - time: a deadline, after which its process group is killed;
//   - output: stdout and stderr are read through pipes as they come, never into files; more
//     than `max_output_bytes` on either stream kills it (calbench keeps at most that much of
//     stdout, and the last 64 KiB of stderr for messages);
//   - processes: it runs in a process group of its own, marked by an environment variable
//     (CALBENCH_CHILD_ID) that its descendants inherit; when it ends, however it ends, the group
//     and every process still carrying the mark are killed — a `setsid` child leaves the group
//     but not the mark. It also gets PR_SET_PDEATHSIG, so it dies with calbench even by kill -9;
//   - a stop request (core/stop_request.hpp) is forwarded: the group gets the same signal, has
//     two seconds to exit, then is killed.
// What cannot be caught: a descendant that both leaves the group and clears its environment,
// and the descendants of a command whose calbench was killed by SIGKILL (only the command
// itself gets PR_SET_PDEATHSIG). A cgroup would catch both; calbench does not need root.
#include <cstddef>
#include <string>
#include <vector>

namespace calbench {

struct ChildLimits {
  double timeout_seconds = 600.0;
  std::size_t max_output_bytes = std::size_t{64} << 20;
};

struct ChildOutcome {
  enum class End {
    not_started,  // `code` is the errno of the failed start
    exited,       // `code` is the exit status
    signalled,    // `code` is the signal that ended it
    timed_out,
    output_cap,  // `capped_stream` ("standard output", "standard error") passed the cap
    stopped,     // a stop request ended it (the caller throws Interrupted)
  };
  End end = End::not_started;
  int code = 0;
  std::string out;       // stdout, whole (at most the cap)
  std::string err_tail;  // the last 64 KiB of stderr
  std::string capped_stream;
};

// Runs argv (argv[0] looked up on PATH as a shell does) with stdin from /dev/null.
ChildOutcome run_child(const std::vector<std::string>& argv, const ChildLimits& limits);

}  // namespace calbench
