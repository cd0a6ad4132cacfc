#pragma once
// A run's result set, written whole or not at all (docs/durability.md). A run into OUT:
//   - takes an exclusive lock, `.NAME.lock` beside OUT (flock: released by the kernel when the
//     process dies, however it dies), so a second run on OUT is refused at once;
//   - works in `.NAME.partial/` beside OUT: `journal.bin` (core/journal.hpp) and `set/`, where
//     the result files are written;
//   - commits by swapping `set/` in as OUT in one rename (renameat2 RENAME_EXCHANGE when OUT
//     exists), then removes the old set and the work directory.
// Until the commit OUT holds the previous set untouched. On failure the staged set is
// removed; the journal stays when the caller asks (an interruption or an I/O error, so that
// `--resume` continues) or when an earlier run left it (a failing run never destroys another
// run's journal), else the work directory goes too.
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace calbench {

// The output directory cannot take this run's results (locked by another run, not writable,
// not a result set, an interrupted run's journal in the way).
class OutputError : public InputError {
 public:
  using InputError::InputError;
};

// Whether a run may replace a finished result set at OUT (`--overwrite`, issue #28): without
// it a rerun into a finished set is refused, so nothing a user ran is lost by a forgotten
// flag. An interrupted run's journal beside OUT lets --resume / --restart go on without it:
// the run that left the journal was itself allowed to replace OUT.
enum class Overwrite { no, yes };

class ResultSetTransaction {
 public:
  // Locks `out` and prepares its work directory. Throws OutputError when another run holds
  // the lock, when the directory beside OUT cannot be written, when OUT exists and is neither
  // a directory of calbench results (it has config.resolved.json) nor empty, and when it is a
  // finished result set, `overwrite` is no and no interrupted run's journal is beside it.
  ResultSetTransaction(const std::filesystem::path& out, Overwrite overwrite);
  ResultSetTransaction(const ResultSetTransaction&) = delete;
  ResultSetTransaction& operator=(const ResultSetTransaction&) = delete;
  ~ResultSetTransaction();  // not committed: removes the staged set (see keep_journal)

  const std::filesystem::path& out() const { return out_; }
  const std::filesystem::path& work() const { return work_; }
  std::filesystem::path staging() const { return work_ / "set"; }
  std::filesystem::path journal_path() const { return work_ / "journal.bin"; }
  // The journal an earlier, interrupted run on OUT left (nullopt: none).
  std::optional<std::filesystem::path> previous_journal() const;
  // Removes the earlier run's work directory (its journal) and starts an empty one.
  void discard_previous();
  // On failure, keep this run's journal (for --resume) instead of removing it.
  void keep_journal(bool keep) { keep_journal_ = keep; }
  // Swaps the staged set in as OUT, removes the old set and the work directory, unlocks.
  void commit();

 private:
  void release_lock() noexcept;

  std::filesystem::path out_, work_, lock_path_;
  int lock_fd_ = -1;
  bool committed_ = false, keep_journal_ = false;
  bool had_previous_ = false;  // an earlier run's journal: never removed but by discard_previous
};

}  // namespace calbench
