#pragma once
// Progress on stderr: a redrawn bar when stderr is a terminal, plain lines every few seconds
// otherwise (logs, CI). Thread-safe; prints at most a few times per second.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace calbench {

class Progress {
 public:
  Progress(std::string what, bool enabled);
  void update(std::size_t done, std::size_t total);
  void finish();

 private:
  void draw(std::size_t done, std::size_t total);
  std::string what_;
  bool enabled_, terminal_;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mutex_;
  bool drawn_ = false;
  std::size_t last_done_ = 0, last_total_ = 0;
};

}  // namespace calbench
