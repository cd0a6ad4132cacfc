#include "core/stop_request.hpp"

#include <signal.h>

#include <array>

#include "core/error.hpp"

namespace calbench {
namespace {

std::atomic<bool> flag{false};
std::atomic<int> signal_number{0};
std::array<std::atomic<pid_t>, kMaxChildGroups> child_groups{};

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
                  std::atomic<pid_t>::is_always_lock_free,
              "the stop request is set in a signal handler");

extern "C" void on_stop_signal(int signal) {
  if (!flag.exchange(true)) {
    signal_number.store(signal);
    return;
  }
  for (auto& group : child_groups) {
    const pid_t g = group.load();
    if (g > 0) ::kill(-g, SIGKILL);
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

}  // namespace

std::atomic<bool>& stop_flag() {
  return flag;
}

int stop_signal_number() {
  return signal_number.load();
}

void request_stop(int signal) noexcept {
  signal_number.store(signal);
  flag.store(true);
}

void clear_stop() noexcept {
  flag.store(false);
  signal_number.store(0);
}

void throw_if_stop_requested() {
  if (flag.load(std::memory_order_relaxed)) throw Interrupted();
}

void install_stop_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

void register_child_group(pid_t group) noexcept {
  for (auto& slot : child_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, group)) return;
  }
}

void unregister_child_group(pid_t group) noexcept {
  for (auto& slot : child_groups) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace calbench
