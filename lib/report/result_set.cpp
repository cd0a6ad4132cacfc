#include "report/result_set.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <vector>

#include "core/own_file.hpp"

namespace calbench {
namespace {

namespace fs = std::filesystem;

std::string reason(int error) {
  return std::generic_category().message(error);
}

// OUT as an absolute path without a trailing separator; its last component names the lock and
// the work directory beside it.
fs::path normal_out(const fs::path& given) {
  if (given.empty()) throw OutputError("the output directory is empty: name a directory");
  fs::path out = fs::absolute(given).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();
  if (!out.has_filename() || out.filename() == "." || out.filename() == ".." ||
      out == out.root_path())
    throw OutputError("the output directory " + given.string() +
                      " names no directory that a run can replace");
  return out;
}

// The names a result set may hold (docs/durability.md, "The result set"): what the scenarios'
// reporters, a shard and the HTML report write. Anything else in OUT is someone else's file.
const std::vector<std::string>& result_set_names() {
  static const std::vector<std::string> names = {
      // the JSON files and the CSV tables of every scenario
      "config.resolved.json", "summary.json", "run.json", "cells.csv", "replicates.csv",
      "requirements.csv", "reliability.csv", "intervals.csv", "leaderboard.csv",
      "leaderboard_agreement.csv", "leaderboard_contrast.csv",
      // a shard's, and the HTML report
      "cases.json", "config.json", "shard.json", "journal.bin", "report"};
  return names;
}

// OUT may be replaced when it is absent, empty, or a calbench result set holding nothing but
// calbench's files: a run replaces OUT whole, so a file it did not write there would be lost.
// A finished set is replaced only when `may_replace_set` (--overwrite, or an interrupted
// run's journal beside it): a rerun must not silently throw away the results of the last.
void check_replaceable(const fs::path& out, const fs::path& given, bool may_replace_set) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(out, ec);
  if (!fs::exists(st)) return;
  if (!fs::is_directory(st))
    throw OutputError("the output directory " + given.string() +
                      " exists and is not a directory (a run replaces it with its results)");
  if (fs::is_empty(out, ec)) return;
  if (!fs::exists(out / "config.resolved.json"))
    throw OutputError("the output directory " + given.string() +
                      " is neither empty nor a calbench result set (it has no "
                      "config.resolved.json): a run replaces it whole, so it refuses; choose "
                      "another output directory");
  std::vector<std::string> foreign;
  for (const auto& entry : fs::directory_iterator(out, ec)) {
    const std::string name = entry.path().filename().string();
    const auto& known = result_set_names();
    if (std::find(known.begin(), known.end(), name) == known.end()) foreign.push_back(name);
  }
  if (foreign.empty()) {
    if (may_replace_set) return;
    throw OutputError("the output directory " + given.string() +
                      " already holds a finished calbench result set: a run would replace it "
                      "and its results would be lost, so it refuses; pass --overwrite to "
                      "replace it (overwrite=True in Python), or choose another output "
                      "directory");
  }
  std::sort(foreign.begin(), foreign.end());
  std::string shown;
  for (std::size_t i = 0; i < foreign.size() && i < 3; ++i)
    shown += (i > 0 ? ", " : "") + foreign[i];
  if (foreign.size() > 3) shown += ", ... (" + std::to_string(foreign.size()) + " in all)";
  throw OutputError("the output directory " + given.string() +
                    " is a calbench result set that also holds files calbench did not write (" +
                    shown +
                    "): a run replaces it whole, so it refuses; move them out or choose another "
                    "output directory");
}

std::string lock_holder(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "another calbench run" : "another calbench run (pid " + pid + ")";
}

}  // namespace

ResultSetTransaction::ResultSetTransaction(const fs::path& given, Overwrite overwrite) {
  out_ = normal_out(given);
  const fs::path parent = out_.parent_path();
  const std::string name = out_.filename().string();
  work_ = parent / ("." + name + ".partial");
  lock_path_ = parent / ("." + name + ".lock");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    throw OutputError("cannot create the directory " + parent.string() +
                      " for the results: " + ec.message());

  // The lock file may be unlinked by the run that held it between our open and our flock:
  // then the lock we hold is on a file no other run can find, and we try again.
  for (;;) {
    std::string why;
    lock_fd_ = open_own_file(lock_path_, O_RDWR | O_CREAT, why);
    if (lock_fd_ < 0)
      throw OutputError("cannot take the lock " + lock_path_.string() + " (where " +
                        given.string() + " goes): " + why +
                        "; remove it if no calbench run is writing " + given.string());
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string holder = lock_holder(lock_fd_);
      ::close(lock_fd_);
      lock_fd_ = -1;
      if (error == EWOULDBLOCK)
        throw OutputError(holder + " is writing " + given.string() + " (it holds the lock " +
                          lock_path_.string() +
                          "): wait for it to finish, or choose another output directory");
      throw OutputError("cannot lock " + lock_path_.string() + ": " + reason(error));
    }
    struct stat by_fd {
    }, by_path{};
    if (::fstat(lock_fd_, &by_fd) == 0 && ::stat(lock_path_.c_str(), &by_path) == 0 &&
        by_fd.st_ino == by_path.st_ino && by_fd.st_dev == by_path.st_dev)
      break;
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
    const int error = errno;
    release_lock();
    throw OutputError("cannot write the lock " + lock_path_.string() + ": " + reason(error));
  }

  try {
    check_replaceable(out_, given, overwrite == Overwrite::yes || previous_journal().has_value());
    // The work directory is removed and refilled: a symbolic link there would have calbench
    // delete and write inside whatever it points to.
    const fs::file_status work_status = fs::symlink_status(work_, ec);
    if (fs::exists(work_status) && !fs::is_directory(work_status))
      throw OutputError("the work directory " + work_.string() + " (where " + given.string() +
                        " is staged) exists and is not a directory" +
                        (fs::is_symlink(work_status) ? " (a symbolic link)" : "") +
                        ": calbench did not make it, so it refuses to replace it; remove it");
    // A work directory without a journal is what a run killed before it began left.
    had_previous_ = previous_journal().has_value();
    if (!had_previous_) fs::remove_all(work_, ec);
    fs::create_directories(work_, ec);
    if (!ec) fs::remove_all(staging(), ec);  // a set staged by an interrupted run
    if (!ec) fs::create_directory(staging(), ec);
    if (ec)
      throw OutputError("cannot write in " + parent.string() + " (where " + given.string() +
                        " goes): " + ec.message());
  } catch (...) {
    release_lock();
    throw;
  }
}

ResultSetTransaction::~ResultSetTransaction() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(keep_journal_ || had_previous_ ? staging() : work_, ec);
  }
  release_lock();
}

std::optional<fs::path> ResultSetTransaction::previous_journal() const {
  std::error_code ec;
  if (fs::is_regular_file(journal_path(), ec)) return journal_path();
  return std::nullopt;
}

void ResultSetTransaction::discard_previous() {
  std::error_code ec;
  fs::remove_all(work_, ec);
  had_previous_ = false;
  if (!ec) fs::create_directories(staging(), ec);
  if (ec) throw OutputError("cannot replace " + work_.string() + ": " + ec.message());
}

void ResultSetTransaction::commit() {
  const fs::path staged = staging();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out_, ec))) {
    // One atomic step where the file system has it; else two renames, with the old set moved
    // aside first (a crash between them leaves it in the work directory, OUT absent).
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, out_.c_str(), RENAME_EXCHANGE) != 0) {
      if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        throw std::system_error(errno, std::generic_category(), "cannot replace " + out_.string());
      fs::rename(out_, work_ / "old");
      fs::rename(staged, out_);
    }
  } else {
    fs::rename(staged, out_);
  }
  committed_ = true;
  fs::remove_all(work_, ec);  // the old set and the journal; a failure leaves them, harmless
  release_lock();
}

void ResultSetTransaction::release_lock() noexcept {
  if (lock_fd_ < 0) return;
  // Unlinked while still held, so no run can lock this file after we let go of it.
  ::unlink(lock_path_.c_str());
  ::close(lock_fd_);
  lock_fd_ = -1;
}

}  // namespace calbench
