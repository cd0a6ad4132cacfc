#pragma once
// The process-wide request to stop (docs/durability.md, docs/external.md): the command line's
// SIGINT and SIGTERM set it; long work polls it (a run's task stream through
// StreamControl::stop, an external command's wait loop). Its state is lock-free atomics, so a
// signal handler may set it.
//
// The handlers: the first SIGINT or SIGTERM sets the flag and records the signal, so the run
// stops at its next task boundary and keeps its journal. A second one cannot wait for that: it
// kills the process groups of the external commands still running (registered below; kill(2)
// is async-signal-safe), then ends the process by the signal's default action.
#include <sys/types.h>

#include <atomic>

namespace calbench {

std::atomic<bool>& stop_flag();
// The signal that set the flag (0: none, or set by other means).
int stop_signal_number();
// Sets the flag as a signal would (Python's KeyboardInterrupt; tests).
void request_stop(int signal) noexcept;
// Clears the flag (a Python session continues after an interrupted call).
void clear_stop() noexcept;
void install_stop_signal_handlers();
// Throws Interrupted when a stop was requested: the check points of long computations that are
// not task streams (the truth engine's Monte Carlo), so that SIGINT is honoured within a
// second there too. Nothing they computed is kept: a truth is recomputed on --resume.
void throw_if_stop_requested();

// External commands' process groups, killed by a second signal. At most kMaxChildGroups at
// once are remembered (one per running command: a thread runs one at a time); a group past
// that limit is still killed by its own wait loop, only not by a second signal.
inline constexpr int kMaxChildGroups = 256;
void register_child_group(pid_t group) noexcept;
void unregister_child_group(pid_t group) noexcept;

}  // namespace calbench
