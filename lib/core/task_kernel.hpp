#pragma once
// The one execution kernel for keyed parallel work. Every parallel loop in calbench is one of
// three shapes, and all live here so that no scenario, truth computation, decision value or
// fit writes its own skeleton:
//   - a TaskGrid: (cell, replicate) tasks of a sweep, run by for_each_task with per-thread
//     scratch buffers and progress reporting;
//   - fixed batches: map_batches computes batch b into slot b, and the caller folds the slots
//     in index order (or fold_batches does it), so a sum has the same bits for any thread count;
//   - for_each_index: index i of [0, count) writes only what belongs to i (row i of an array,
//     group i's own accumulators); the other two are built on it;
//   - a task stream: stream_tasks computes the tasks of a TaskGrid in parallel and hands their
//     results to the caller in task order, a bounded number in flight, so a run folds its
//     statistics as it goes (memory independent of the replicate count), records each result
//     in the run journal and, on resume, replays the recorded ones instead of computing them.
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
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/byte_archive.hpp"
#include "core/error.hpp"
#include "core/journal.hpp"

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

// How a task stream runs besides its work: progress, the journal, and a stop request.
struct StreamControl {
  ProgressFn progress;
  // Each stream given a journal is the journal's next stage: its results are recorded in task
  // order, and the ones a resumed journal holds are replayed (decoded, not computed).
  TaskJournal* journal = nullptr;
  // Once set, no task starts; the ones running finish, are recorded and handed over, and
  // stream_tasks throws Interrupted. (An atomic<bool> may be set from a signal handler.)
  const std::atomic<bool>* stop = nullptr;
  // A shard (0-based index of count) computes and journals only its contiguous range of each
  // stream's tasks, [total * index / count, total * (index + 1) / count), and hands none of
  // them to consume: a sharded run's folds stay empty and the shards' journals are merged
  // (merge_shards in core/journal.hpp) into one that a run replays whole.
  struct Shard {
    std::size_t index = 0, count = 1;
  };
  std::optional<Shard> shard;
};

// Runs compute(key, scratch) -> Result for every task of the grid, in parallel, and calls
// consume(key, Result&&) once per task, serially and in task order (cell-major, replicates in
// order): a fold in consume gives the same bits for any thread count. At most a few tasks per
// thread are in flight, so memory holds a few Results per thread, never one per task. With a
// journal, Result is written and read with core/byte_archive.hpp (a `serialize` for record
// types), and a resumed stream hands consume the recorded results first, bit for bit.
template <typename Result, typename Scratch = NoScratch, typename Compute, typename Consume>
void stream_tasks(const TaskGrid& grid, Compute&& compute, Consume&& consume,
                  const StreamControl& control = {}) {
  struct Item {
    std::size_t task = 0;
    bool recorded = false;  // replayed from the journal
    std::string bytes;
    Result result{};
  };
  TaskJournal* const journal = control.journal;
  // This run's tasks: all, or the shard's range [begin, end).
  std::size_t begin = 0, end = grid.size();
  if (control.shard) {
    begin = grid.size() * control.shard->index / control.shard->count;
    end = grid.size() * (control.shard->index + 1) / control.shard->count;
  }
  const std::size_t recorded = journal != nullptr ? journal->begin_stage(end, begin) : 0;
  // Recorded results are replayed to consume; a shard hands nothing to consume, so it skips
  // them instead.
  const std::size_t replay_end = control.shard ? begin : begin + recorded;
  const std::size_t start = control.shard ? begin + recorded : begin;
  const auto in_flight = static_cast<std::size_t>(4 * tbb::this_task_arena::max_concurrency());
  tbb::enumerable_thread_specific<Scratch> scratch;
  std::size_t next = start, done = 0;
  bool stopped = false;
  try {
    tbb::parallel_pipeline(
        in_flight,
        tbb::make_filter<void, Item>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control&
                                                                                flow) {
          Item item;
          if (next == end || (control.stop != nullptr && control.stop->load())) {
            stopped = next != end;
            flow.stop();
            return item;
          }
          item.task = next++;
          if (item.task < replay_end) {
            item.recorded = true;
            item.bytes = journal->next_replayed();
          }
          return item;
        }) & tbb::make_filter<Item, Item>(tbb::filter_mode::parallel, [&](Item item) {
          if (item.recorded) {
            item.result = from_bytes<Result>(item.bytes);
          } else {
            item.result = detail::call_with_scratch(compute, grid.key(item.task), scratch.local());
            if (journal != nullptr) item.bytes = to_bytes(item.result);
          }
          return item;
        }) & tbb::make_filter<Item, void>(tbb::filter_mode::serial_in_order, [&](Item item) {
          if (journal != nullptr && !item.recorded) journal->append(item.task, item.bytes);
          if (!control.shard) consume(grid.key(item.task), std::move(item.result));
          ++done;
          if (control.progress) control.progress(done, end - start);
        }));
  } catch (...) {
    if (journal != nullptr) {
      try {
        journal->flush();
      } catch (const std::exception&) {
        // The first error is the one to report.
      }
    }
    throw;
  }
  if (journal != nullptr) journal->flush(stopped);
  if (stopped) throw Interrupted();
}

}  // namespace calbench
