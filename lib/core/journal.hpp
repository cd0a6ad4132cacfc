#pragma once
// The run journal: every finished task's result, appended in task order, so that an
// interrupted run (SIGINT, SIGTERM, SIGKILL, a full disk) continues where it stopped and folds
// exactly the bits the first attempt computed (docs/durability.md).
//
// A run is a sequence of *stages*: each execution-kernel stream (stream_tasks in
// core/task_kernel.hpp) that is given the journal is the next stage, in the run's fixed order.
// Within a stage, results are appended in task order, so the journal always holds a prefix of
// the run: stages 0 .. s-1 whole, and the first k tasks of stage s. A shard's journal holds
// the same for its own range of tasks [first, end) of every stage (--shard, merge_shards).
//
// File layout (little-endian):
//   header  "CALBJRN1", u32 identity length, identity text, u32 CRC-32 of the identity
//   record  u32 payload length, u32 stage, u64 task, payload, u32 CRC-32 of all before it
// A record whose length runs past the end of the file or whose checksum fails is a torn write
// (the process died inside write(2)): it and everything after it are dropped on resume. The
// identity (config hash, calbench version, git revision) must match the run that resumes.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace calbench {

// A journal that cannot be resumed by this run: another config or build, or not a journal.
class JournalMismatch : public InputError {
 public:
  using InputError::InputError;
};

// A journal that should be whole (a finished shard's) and is not: a record fails its checksum
// or is cut short, or it holds fewer records than its shard lists.
class JournalCorrupt : public InputError {
 public:
  using InputError::InputError;
};

class TaskJournal {
 public:
  // A new, empty journal at `path` (an existing file is replaced).
  static TaskJournal create(const std::filesystem::path& path, std::string identity);
  // The journal at `path`, for a run with `identity`: throws JournalMismatch when it belongs to
  // another identity; drops a torn tail (truncates the file after the last whole record).
  static TaskJournal resume(const std::filesystem::path& path, std::string identity);
  // A finished journal (a shard's), opened read-only for replay: throws JournalMismatch as
  // resume does and JournalCorrupt where resume would drop or restart; never writes the file.
  static TaskJournal read(const std::filesystem::path& path, std::string identity);

  TaskJournal(TaskJournal&& other) noexcept;
  TaskJournal& operator=(TaskJournal&&) = delete;
  TaskJournal(const TaskJournal&) = delete;
  ~TaskJournal();  // writes what is buffered (errors ignored: call flush() to see them)

  // Starts the next stage, whose tasks (of this run or shard) are [first, end); returns how
  // many of them, from `first`, the journal holds (to be replayed with next_replayed() before
  // the stage computes the rest). Throws JournalMismatch when the journal's stage does not fit
  // in the range, or an earlier stage does not fill its range.
  std::size_t begin_stage(std::size_t end, std::size_t first = 0);
  // The next recorded payload of the current stage, in task order.
  std::string next_replayed();
  // Appends the result of task `task` of the current stage (the next one in order).
  void append(std::size_t task, std::string_view payload);
  // Writes the buffered records to the file (and, with `sync`, to the disk).
  void flush(bool sync = false);

  const std::filesystem::path& path() const { return path_; }
  // Records in the file (recovered plus appended and written): the tasks a resume would not
  // recompute.
  std::size_t records() const { return records_; }
  // Bytes dropped as a torn tail when the journal was opened for resume.
  std::size_t dropped_bytes() const { return dropped_; }

 private:
  struct StageSpan {
    std::uint64_t offset = 0;  // first record
    std::size_t first = 0;     // its task
    std::size_t count = 0;
  };
  static TaskJournal open(const std::filesystem::path& path, std::string identity, bool read_only);
  friend void merge_shards(const std::vector<std::filesystem::path>& shards,
                           const std::string& identity, const std::filesystem::path& out,
                           const std::vector<std::size_t>& expected_records);
  TaskJournal(std::filesystem::path path, int fd, std::string identity);
  void write_all(std::string_view bytes);

  std::filesystem::path path_;
  int fd_ = -1;
  std::string identity_;
  std::vector<StageSpan> recovered_;  // stages as found on resume
  std::uint64_t end_ = 0;             // file offset after the last record written
  std::string buffer_;                // records not yet written
  std::size_t records_ = 0, pending_ = 0, dropped_ = 0;  // pending_: records in buffer_
  std::size_t stage_ = 0;                                // current stage + 1 (0: none begun)
  std::size_t stage_tasks_ = 0, next_task_ = 0;
  std::uint64_t read_offset_ = 0;
  std::size_t replay_left_ = 0;
  double last_flush_ = 0.0;  // steady clock seconds
};

// Joins the journals of shards 1..N of one run (in shard order: each holds a contiguous range
// of every stage's tasks, the next shard's range after it) into one journal at `out`, as if one
// run had recorded them all. Throws JournalMismatch when a shard belongs to another run, or
// leaves a gap before the next shard's tasks (an unfinished shard: resume it first), and
// JournalCorrupt when a shard's journal is damaged or holds other than expected_records[i]
// records (its shard.json's count; not checked past the vector's end). The shards' files are
// only read. Tasks no shard recorded at the end of a stage are left to the run that replays
// the merged journal.
void merge_shards(const std::vector<std::filesystem::path>& shards, const std::string& identity,
                  const std::filesystem::path& out,
                  const std::vector<std::size_t>& expected_records = {});

// The CRC-32 (IEEE 802.3, as zlib's crc32) of `bytes` followed by `more` (without joining them).
std::uint32_t crc32(std::string_view bytes, std::string_view more = {});

}  // namespace calbench
