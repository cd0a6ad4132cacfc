#pragma once
// Progress on stderr: a redrawn bar when stderr is a terminal, plain lines every few seconds
// otherwise (logs, CI). Thread-safe; prints at most a few times per second.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace calbench {

// What a progress line counts and when it first appears: `first_after` keeps short phases
// silent (eval's phases show a line only once they have run for 2 s).
struct ProgressStyle {
  std::string unit = "replicates";
  std::chrono::milliseconds first_after{0};
  std::chrono::milliseconds plain_every{5000};  // period of the plain lines
};

// CPU seconds of the calling thread: the work of a step, which a shared machine's load does not
// stretch as it stretches wall time (eval's estimate, bench --data).
double thread_cpu_seconds();

class Progress {
 public:
  Progress(std::string what, bool enabled, ProgressStyle style = {});
  void update(std::size_t done, std::size_t total);
  void finish();

 private:
  void draw(std::size_t done, std::size_t total);
  std::string what_;
  ProgressStyle style_;
  bool enabled_, terminal_;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mutex_;
  bool drawn_ = false;
  std::size_t last_done_ = 0, last_total_ = 0;
};

}  // namespace calbench
