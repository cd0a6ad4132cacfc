#pragma once
// The one execution kernel for keyed parallel work. Every parallel loop in calbench is one of
// two shapes, and both live here so that no scenario, truth computation or decision value
// writes its own skeleton:
//   - a TaskGrid: (cell, replicate) tasks of a sweep, run by for_each_task with per-thread
//     scratch buffers and progress reporting;
//   - fixed batches: map_batches computes batch b into slot b, and the caller folds the slots
//     in index order (or fold_batches does it), so a sum has the same bits for any thread count.
// Work is keyed by what it computes (a cell and replicate, or a batch index), never by thread:
// a task draws from the stream make_engine({seed, cell, replicate, purpose}) and writes only
// its own pre-sized slot. Scratch buffers are per thread and allocated once.
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace calbench {

// Called from worker threads after each finished task with (tasks done, total); must be
// thread-safe and cheap. Empty: no reporting.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

struct TaskKey {
  std::size_t cell = 0, replicate = 0;
};

// The (cell, replicate) tasks of a sweep: cell c has replicates(c) tasks; task indices run
// cell-major (all replicates of cell 0, then of cell 1, ...).
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

// Runs fn(key, scratch) once for every task of the grid, in parallel. `Scratch` is
// default-constructed at most once per worker thread and reused by the tasks that thread runs.
template <typename Scratch = NoScratch, typename Fn>
void for_each_task(const TaskGrid& grid, Fn&& fn, const ProgressFn& progress = {}) {
  tbb::enumerable_thread_specific<Scratch> scratch;
  std::atomic<std::size_t> done{0};
  const std::size_t total = grid.size();
  tbb::parallel_for(std::size_t{0}, total, [&](std::size_t task) {
    fn(grid.key(task), scratch.local());
    if (progress) progress(done.fetch_add(1, std::memory_order_relaxed) + 1, total);
  });
}

// out[b] = fn(b, scratch) for b in [0, batches), in parallel, each batch into its own slot.
template <typename T, typename Scratch = NoScratch, typename Fn>
std::vector<T> map_batches(std::size_t batches, Fn&& fn, const ProgressFn& progress = {}) {
  std::vector<T> out(batches);
  tbb::enumerable_thread_specific<Scratch> scratch;
  std::atomic<std::size_t> done{0};
  tbb::parallel_for(std::size_t{0}, batches, [&](std::size_t b) {
    out[b] = fn(b, scratch.local());
    if (progress) progress(done.fetch_add(1, std::memory_order_relaxed) + 1, batches);
  });
  return out;
}

// map_batches, then combine(acc, slot) over the slots in index order from `init`.
template <typename T, typename Scratch = NoScratch, typename Fn, typename Combine>
T fold_batches(std::size_t batches, T init, Fn&& fn, Combine&& combine) {
  std::vector<T> slots = map_batches<T, Scratch>(batches, std::forward<Fn>(fn));
  for (auto& slot : slots) init = combine(std::move(init), std::move(slot));
  return init;
}

}  // namespace calbench
