// The execution kernel (core/task_kernel.hpp): the grid's key mapping, every task run once,
// per-thread scratch reused, folds in index order with the same bits on 1 and 2 threads,
// progress reaching the total.
#include <tbb/global_control.h>

#include <atomic>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/task_kernel.hpp"

using namespace calbench;

TEST_CASE("task grid maps task indices to (cell, replicate), skipping empty cells",
          "[unit][core]") {
  const TaskGrid grid({2, 0, 3, 0, 0, 1});
  CHECK(grid.cells() == 6);
  CHECK(grid.size() == 6);
  CHECK(grid.replicates(1) == 0);
  CHECK(grid.first_task(2) == 2);
  CHECK(grid.first_task(5) == 5);
  const std::vector<std::pair<std::size_t, std::size_t>> expected = {{0, 0}, {0, 1}, {2, 0},
                                                                     {2, 1}, {2, 2}, {5, 0}};
  for (std::size_t t = 0; t < grid.size(); ++t) {
    CAPTURE(t);
    CHECK(grid.key(t).cell == expected[t].first);
    CHECK(grid.key(t).replicate == expected[t].second);
  }
  const TaskGrid leading_empty({0, 0, 1});
  CHECK(leading_empty.key(0).cell == 2);
  CHECK(leading_empty.key(0).replicate == 0);
  CHECK(TaskGrid({}).size() == 0);
  CHECK(TaskGrid({0, 0}).size() == 0);
}

TEST_CASE("for_each_task runs every task exactly once and reports progress up to the total",
          "[unit][core]") {
  const std::vector<std::size_t> reps = {7, 0, 300, 1, 0, 45};
  const TaskGrid grid(reps);
  std::vector<std::atomic<int>> runs(grid.size());
  std::mutex mutex;
  std::vector<std::size_t> reported;
  std::size_t seen_total = 0;
  for_each_task(
      grid,
      [&](TaskKey key) {
        REQUIRE(key.cell < reps.size());
        REQUIRE(key.replicate < reps[key.cell]);
        runs[grid.first_task(key.cell) + key.replicate].fetch_add(1);
      },
      [&](std::size_t done, std::size_t total) {
        std::lock_guard lock(mutex);
        reported.push_back(done);
        seen_total = total;
      });
  for (std::size_t t = 0; t < grid.size(); ++t) {
    CAPTURE(t);
    CHECK(runs[t].load() == 1);
  }
  // One report per task; the counts are 1 .. total, each once, whatever the order.
  CHECK(seen_total == grid.size());
  REQUIRE(reported.size() == grid.size());
  std::sort(reported.begin(), reported.end());
  for (std::size_t i = 0; i < reported.size(); ++i) CHECK(reported[i] == i + 1);
}

namespace {
// Counts its constructions, and the tasks that used it.
struct CountingScratch {
  static inline std::atomic<int> constructed{0};
  std::size_t uses = 0;
  std::vector<double> buffer;
  CountingScratch() { constructed.fetch_add(1); }
};
}  // namespace

TEST_CASE("per-thread scratch is built at most once per thread and reused", "[unit][core]") {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(threads));
    CountingScratch::constructed = 0;
    std::atomic<std::size_t> uses{0}, reused_buffers{0};
    const TaskGrid grid({500, 500});
    for_each_task<CountingScratch>(grid, [&](TaskKey, CountingScratch& s) {
      // A buffer left by an earlier task of this thread is reused, not reallocated.
      if (!s.buffer.empty()) reused_buffers.fetch_add(1);
      s.buffer.resize(64);
      ++s.uses;
      uses.fetch_add(1);
    });
    CHECK(uses.load() == 1000);
    CHECK(CountingScratch::constructed.load() >= 1);
    CHECK(CountingScratch::constructed.load() <= threads);
    CHECK(reused_buffers.load() == 1000 - static_cast<std::size_t>(CountingScratch::constructed));
  }
}

TEST_CASE("for_each_index and map_batches fill every slot, with or without scratch",
          "[unit][core]") {
  std::vector<std::size_t> squares(1000);
  for_each_index(squares.size(), [&](std::size_t i) { squares[i] = i * i; });
  for (std::size_t i = 0; i < squares.size(); ++i) REQUIRE(squares[i] == i * i);
  const auto doubled = map_batches<std::size_t>(100, [](std::size_t b) { return 2 * b; });
  const auto with_scratch = map_batches<std::size_t, CountingScratch>(
      100, [](std::size_t b, CountingScratch& s) { return b + (++s.uses, 0); });
  for (std::size_t b = 0; b < 100; ++b) {
    REQUIRE(doubled[b] == 2 * b);
    REQUIRE(with_scratch[b] == b);
  }
  for_each_index(0, [](std::size_t) { FAIL("no index to run"); });
}

TEST_CASE("fold_batches combines in index order: the same bits on 1 and 2 threads",
          "[unit][core]") {
  // Terms of wildly different magnitudes and signs: floating-point addition in any other
  // order gives other bits (checked below, so the test can fail).
  constexpr std::size_t batches = 257;
  const auto term = [](std::size_t b) {
    const double sign = (b % 3 == 0) ? -1.0 : 1.0;
    return sign *
           std::ldexp(1.0 + 0.1 * static_cast<double>(b), static_cast<int>((b * 37) % 61) - 30);
  };
  double in_order = 0.0;
  for (std::size_t b = 0; b < batches; ++b) in_order += term(b);
  double reversed = 0.0;
  for (std::size_t b = batches; b-- > 0;) reversed += term(b);
  REQUIRE(std::bit_cast<std::uint64_t>(in_order) != std::bit_cast<std::uint64_t>(reversed));

  const auto fold = [&] {
    return fold_batches(batches, 0.0, term, [](double acc, double x) { return acc + x; });
  };
  double one = 0.0, two = 0.0;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = fold();
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = fold();
  }
  CHECK(std::bit_cast<std::uint64_t>(one) == std::bit_cast<std::uint64_t>(in_order));
  CHECK(std::bit_cast<std::uint64_t>(two) == std::bit_cast<std::uint64_t>(in_order));

  // A non-commutative combination shows the order itself: the digits of the batch indices.
  const auto digits = fold_batches(
      12, std::vector<std::size_t>{}, [](std::size_t b) { return std::vector<std::size_t>{b}; },
      [](std::vector<std::size_t> acc, const std::vector<std::size_t>& slot) {
        acc.insert(acc.end(), slot.begin(), slot.end());
        return acc;
      });
  REQUIRE(digits.size() == 12);
  for (std::size_t b = 0; b < 12; ++b) CHECK(digits[b] == b);
}
