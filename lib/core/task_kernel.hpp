#pragma once
// The one execution kernel for keyed parallel work. Every parallel loop in calbench is one of
// three shapes, and all live here so that no scenario, truth computation, decision value or
// fit writes its own skeleton:
//   - a TaskGrid: (cell, replicate) tasks of a sweep, run by for_each_task with per-thread
//     scratch buffers and progress reporting;
//   - fixed batches: map_batches computes batch b into slot b, and the caller folds the slots
//     in index order (or fold_batches does it), so a sum has the same bits for any thread count;
//   - for_each_index: index i of [0, count) writes only what belongs to i (row i of an array,
//     group i's own accumulators); the other two are built on it.
// Work is keyed by what it computes (a cell and replicate, a batch or an index), never by
// thread: a task draws from the stream make_engine({seed, cell, replicate, purpose}) and writes
// only its own pre-sized slot. Scratch buffers are per thread and allocated once.
//
// Scheduling is TBB's default (auto partitioner, grain 1): how indices are split over threads
// changes nothing but speed. A loop with NoScratch keeps no thread-local storage at all, so
// the kernel costs a plain tbb::parallel_for nothing (temperature scaling's Newton passes,
// docs/performance.md).
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

namespace calbench {

// Called from worker threads after each finished task with (tasks done, total); must be
// thread-safe and cheap. Empty: no reporting. `done` reaches `total` exactly once.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

struct TaskKey {
  std::size_t cell = 0, replicate = 0;
};

// The (cell, replicate) tasks of a sweep: cell c has replicates(c) tasks; task indices run
// cell-major (all replicates of cell 0, then of cell 1, ...). A cell may have no replicates.
class TaskGrid {
 public:
  explicit TaskGrid(const std::vector<std::size_t>& replicates_per_cell);
  std::size_t cells() const { return first_.size() - 1; }
  std::size_t size() const { return first_.back(); }
  std::size_t replicates(std::size_t cell) const { return first_[cell + 1] - first_[cell]; }
  std::size_t first_task(std::size_t cell) const { return first_[cell]; }
  TaskKey key(std::size_t task) const;

 private:
  std::vector<std::size_t> first_;  // first task of each cell, then the total
};

// No per-thread scratch.
struct NoScratch {};

namespace detail {
// fn(i, scratch) when fn takes the scratch, else fn(i): loops without scratch may omit it.
template <typename Fn, typename Index, typename Scratch>
decltype(auto) call_with_scratch(Fn& fn, Index i, Scratch& scratch) {
  if constexpr (std::is_invocable_v<Fn&, Index, Scratch&>)
    return fn(i, scratch);
  else
    return fn(i);
}
}  // namespace detail

// Runs fn(i, scratch) once for every i in [0, count), in parallel. `Scratch` is
// default-constructed at most once per worker thread and reused by the indices that thread
// runs. With NoScratch (the default) there is no thread-local storage, and fn may take i alone.
template <typename Scratch = NoScratch, typename Fn>
void for_each_index(std::size_t count, Fn&& fn, const ProgressFn& progress = {}) {
  std::atomic<std::size_t> done{0};
  const auto report = [&] {
    if (progress) progress(done.fetch_add(1, std::memory_order_relaxed) + 1, count);
  };
  if constexpr (std::is_same_v<Scratch, NoScratch>) {
    NoScratch none;
    tbb::parallel_for(std::size_t{0}, count, [&](std::size_t i) {
      detail::call_with_scratch(fn, i, none);
      report();
    });
  } else {
    tbb::enumerable_thread_specific<Scratch> scratch;
    tbb::parallel_for(std::size_t{0}, count, [&](std::size_t i) {
      detail::call_with_scratch(fn, i, scratch.local());
      report();
    });
  }
}

// Runs fn(key, scratch) once for every task of the grid, in parallel.
template <typename Scratch = NoScratch, typename Fn>
void for_each_task(const TaskGrid& grid, Fn&& fn, const ProgressFn& progress = {}) {
  for_each_index<Scratch>(
      grid.size(),
      [&](std::size_t task, Scratch& s) { detail::call_with_scratch(fn, grid.key(task), s); },
      progress);
}

// out[b] = fn(b, scratch) for b in [0, batches), in parallel, each batch into its own slot.
template <typename T, typename Scratch = NoScratch, typename Fn>
std::vector<T> map_batches(std::size_t batches, Fn&& fn, const ProgressFn& progress = {}) {
  std::vector<T> out(batches);
  for_each_index<Scratch>(
      batches, [&](std::size_t b, Scratch& s) { out[b] = detail::call_with_scratch(fn, b, s); },
      progress);
  return out;
}

// map_batches, then init = combine(init, slot) over the slots in index order: the same bits
// for any thread count, however the combination rounds.
template <typename T, typename Scratch = NoScratch, typename Fn, typename Combine>
T fold_batches(std::size_t batches, T init, Fn&& fn, Combine&& combine) {
  std::vector<T> slots = map_batches<T, Scratch>(batches, std::forward<Fn>(fn));
  for (auto& slot : slots) init = combine(std::move(init), std::move(slot));
  return init;
}

}  // namespace calbench
