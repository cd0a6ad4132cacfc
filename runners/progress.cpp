#include "runners/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace calbench {

double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

Progress::Progress(std::string what, bool enabled, ProgressStyle style)
    : what_(std::move(what)),
      style_(std::move(style)),
      enabled_(enabled),
      terminal_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {
  if (enabled_ && style_.heartbeat) heartbeat_ = std::thread([this] { beat(); });
}

Progress::~Progress() {
  stop_heartbeat();
}

// Every 250 ms, the last counts again: update() decides whether a line is due.
void Progress::beat() {
  std::unique_lock lock(beat_mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; })) {
    std::size_t done = 0, total = 0;
    {
      const std::lock_guard counts(mutex_);
      done = last_done_;
      total = last_total_;
    }
    if (total > 0) update(done, total);
  }
}

void Progress::stop_heartbeat() {
  if (!heartbeat_.joinable()) return;
  {
    const std::lock_guard lock(beat_mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  heartbeat_.join();
}

void Progress::update(std::size_t done, std::size_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const auto interval = terminal_ ? std::chrono::milliseconds(200) : style_.plain_every;
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  last_done_ = std::max(last_done_, done);
  last_total_ = total;
  if (now - start_ < style_.first_after) return;
  // With first_after, the first line as soon as it has passed; then one per interval.
  const bool first_due = !drawn_ && style_.first_after.count() > 0;
  if (now - last_ < interval && !first_due) return;
  last_ = now;
  draw(last_done_, total);
}

void Progress::finish() {
  if (!enabled_) return;
  stop_heartbeat();
  std::lock_guard lock(mutex_);
  if (drawn_ && terminal_) std::fputc('\n', stderr);
}

void Progress::draw(std::size_t done, std::size_t total) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0.0;
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  // Before the first step is done there is no rate: the time so far instead of an ETA.
  char pace[64];
  if (done == 0)
    std::snprintf(pace, sizeof pace, "%.0f s so far", elapsed);
  else
    std::snprintf(pace, sizeof pace, "%.0f/s, ETA %.0fs", rate, eta);
  if (terminal_) {
    constexpr int width = 30;
    const int filled = static_cast<int>(frac * width);
    std::fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu %s  %s ", what_.c_str(), filled,
                 "##############################", width - filled, "", done, total,
                 style_.unit.c_str(), pace);
  } else {
    std::fprintf(stderr, "%s: %zu/%zu %s (%.0f%%), %s\n", what_.c_str(), done, total,
                 style_.unit.c_str(), 100.0 * frac, pace);
  }
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace calbench
