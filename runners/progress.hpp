#pragma once
// Progress on stderr: a redrawn bar when stderr is a terminal, plain lines every few seconds
// otherwise (logs, CI). Thread-safe; prints at most a few times per second.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace calbench {

// What a progress line counts and when it first appears: `first_after` keeps short phases
// silent (eval's phases show a line only once they have run for 2 s).
struct ProgressStyle {
  std::string unit = "replicates";
  std::chrono::milliseconds first_after{0};
  std::chrono::milliseconds plain_every{5000};  // period of the plain lines
  // Lines also while no update comes (a thread redraws the last counts with the time so far):
  // for phases of few long steps, such as fit's folds at K = 3,000 (a minute per fold, silent
  // before, issue #38).
  bool heartbeat = false;
};

// Solving the generators' targets (run, validate): silent for 2 s, then a line per few seconds
// even between targets (one at K = 100 takes seconds).
inline ProgressStyle target_progress_style() {
  return {.unit = "targets", .first_after = std::chrono::seconds(2), .heartbeat = true};
}

// CPU seconds of the calling thread: the work of a step, which a shared machine's load does not
// stretch as it stretches wall time (eval's estimate, bench --data).
double thread_cpu_seconds();

class Progress {
 public:
  Progress(std::string what, bool enabled, ProgressStyle style = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(std::size_t done, std::size_t total);
  void finish();

 private:
  void draw(std::size_t done, std::size_t total);
  void beat();
  void stop_heartbeat();
  std::string what_;
  ProgressStyle style_;
  bool enabled_, terminal_;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mutex_;
  bool drawn_ = false;
  std::size_t last_done_ = 0, last_total_ = 0;
  // The heartbeat (ProgressStyle::heartbeat): its thread, woken to stop.
  std::mutex beat_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread heartbeat_;
};

}  // namespace calbench
