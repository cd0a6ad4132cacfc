#include "core/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/crc.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "core/own_file.hpp"

namespace calbench {
namespace {

constexpr std::string_view magic = "CALBJRN1";
constexpr std::size_t record_head = 4 + 4 + 8;  // length, stage, task
constexpr std::size_t flush_bytes = std::size_t{1} << 20;
constexpr double flush_seconds = 0.25;
// A length above this is a torn or foreign record, not a task result.
constexpr std::uint32_t max_payload = std::uint32_t{1} << 30;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void fail_io(const std::string& what, const std::filesystem::path& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path.string());
}

template <typename T>
void append_raw(std::string& out, T value) {
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  out.append(raw, sizeof(T));
}

template <typename T>
T read_raw(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

std::string header_bytes(const std::string& identity) {
  std::string out(magic);
  append_raw(out, static_cast<std::uint32_t>(identity.size()));
  out += identity;
  append_raw(out, crc32(identity));
  return out;
}

// Reads exactly `n` bytes at `offset`; false at the end of the file.
bool read_at(int fd, std::uint64_t offset, std::size_t n, std::string& out,
             const std::filesystem::path& path) {
  out.resize(n);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail_io("cannot read the journal", path);
    }
    if (r == 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

std::uint32_t crc32(std::string_view bytes, std::string_view more) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  crc.process_bytes(more.data(), more.size());
  return crc.checksum();
}

TaskJournal::TaskJournal(std::filesystem::path path, int fd, std::string identity)
    : path_(std::move(path)), fd_(fd), identity_(std::move(identity)), last_flush_(now_seconds()) {}

TaskJournal::TaskJournal(TaskJournal&& o) noexcept
    : path_(std::move(o.path_)),
      fd_(std::exchange(o.fd_, -1)),
      identity_(std::move(o.identity_)),
      recovered_(std::move(o.recovered_)),
      end_(o.end_),
      buffer_(std::move(o.buffer_)),
      records_(o.records_),
      pending_(o.pending_),
      dropped_(o.dropped_),
      stage_(o.stage_),
      stage_tasks_(o.stage_tasks_),
      next_task_(o.next_task_),
      read_offset_(o.read_offset_),
      replay_left_(o.replay_left_),
      last_flush_(o.last_flush_) {}

TaskJournal::~TaskJournal() {
  if (fd_ < 0) return;
  try {
    flush();
  } catch (const std::exception&) {
    // The run is failing already; a resume drops a torn tail.
  }
  ::close(fd_);
}

TaskJournal TaskJournal::create(const std::filesystem::path& path, std::string identity) {
  std::string why;
  const int fd = open_own_file(path, O_RDWR | O_CREAT | O_TRUNC, why);
  if (fd < 0) fail_io("cannot create the journal (" + why + ")", path);
  TaskJournal journal(path, fd, std::move(identity));
  journal.write_all(header_bytes(journal.identity_));
  return journal;
}

TaskJournal TaskJournal::resume(const std::filesystem::path& path, std::string identity) {
  return open(path, std::move(identity), false);
}

TaskJournal TaskJournal::read(const std::filesystem::path& path, std::string identity) {
  return open(path, std::move(identity), true);
}

// resume (read_only false): a torn header starts the journal afresh and a torn tail is cut
// off, as a run killed while writing leaves them. read (true): the journal of a finished
// shard, which no run was writing, so either is damage: JournalCorrupt, the file untouched.
TaskJournal TaskJournal::open(const std::filesystem::path& path, std::string identity,
                              bool read_only) {
  std::string why;
  const int fd = open_own_file(path, read_only ? O_RDONLY : O_RDWR, why);
  if (fd < 0) fail_io("cannot open the journal (" + why + ")", path);
  TaskJournal journal(path, fd, std::move(identity));
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_io("cannot read the journal", path);
  const auto size = static_cast<std::uint64_t>(st.st_size);

  std::string bytes;
  if (!read_at(fd, 0, magic.size() + 4, bytes, path)) {
    // Shorter than the header's start: a run that died while writing it recorded nothing.
    const auto have = static_cast<std::size_t>(std::min<std::uint64_t>(size, magic.size()));
    if (read_only)
      throw JournalCorrupt(path.string() + ": the journal is corrupt: " + std::to_string(size) +
                           " bytes, shorter than its header");
    if (bytes.compare(0, have, magic, 0, have) == 0)
      return create(path, std::move(journal.identity_));
  }
  if (bytes.compare(0, magic.size(), magic) != 0)
    throw JournalMismatch(path.string() + " is not a calbench run journal");
  const auto id_size = read_raw<std::uint32_t>(bytes.data() + magic.size());
  std::string found;
  std::string crc;
  if (id_size > max_payload || !read_at(fd, magic.size() + 4, id_size, found, path) ||
      !read_at(fd, magic.size() + 4 + id_size, 4, crc, path) ||
      read_raw<std::uint32_t>(crc.data()) != crc32(found)) {
    if (read_only)
      throw JournalCorrupt(path.string() +
                           ": the journal is corrupt: its header (the run's identity) is cut "
                           "short or fails its checksum");
    return create(path, std::move(journal.identity_));  // a torn header holds no record
  }
  if (found != journal.identity_)
    throw JournalMismatch("the journal " + path.string() + " belongs to another run (" + found +
                          "), not to this one (" + journal.identity_ + ")");

  // Whole records, in stage and task order; the first that is not ends the journal.
  std::uint64_t offset = magic.size() + 4 + id_size + 4;
  std::string head, body;
  while (read_at(fd, offset, record_head, head, path)) {
    const auto length = read_raw<std::uint32_t>(head.data());
    const auto stage = read_raw<std::uint32_t>(head.data() + 4);
    const auto task = read_raw<std::uint64_t>(head.data() + 8);
    if (length > max_payload || !read_at(fd, offset + record_head, length + 4, body, path)) break;
    if (read_raw<std::uint32_t>(body.data() + length) !=
        crc32(head, std::string_view(body).substr(0, length)))
      break;
    auto& stages = journal.recovered_;
    const bool next_stage = stages.empty() || stage >= stages.size();
    if (!next_stage &&
        (stage + 1 != stages.size() || task != stages.back().first + stages.back().count))
      break;
    while (stages.size() <= stage) stages.push_back({offset, static_cast<std::size_t>(task), 0});
    ++stages.back().count;
    ++journal.records_;
    offset += record_head + length + 4;
  }
  journal.end_ = offset;
  journal.dropped_ = static_cast<std::size_t>(size - offset);
  if (read_only && journal.dropped_ > 0)
    throw JournalCorrupt(path.string() + ": the journal is corrupt: the record at byte " +
                         std::to_string(offset) + " (after " + std::to_string(journal.records_) +
                         " whole records) fails its checksum, is cut short or is out of order, "
                         "and " +
                         std::to_string(journal.dropped_) + " bytes follow it");
  if (journal.dropped_ > 0 && ::ftruncate(fd, static_cast<off_t>(offset)) != 0)
    fail_io("cannot truncate the torn end of the journal", path);
  return journal;
}

std::size_t TaskJournal::begin_stage(std::size_t end, std::size_t first) {
  flush();
  const std::size_t s = stage_++;
  stage_tasks_ = end;
  next_task_ = first;
  replay_left_ = 0;
  const bool later = s + 1 < recovered_.size();
  if (s < recovered_.size() && recovered_[s].count > 0) {
    const StageSpan span = recovered_[s];
    if (span.first != first || span.count > end - first || (later && span.count != end - first))
      throw JournalMismatch("the journal " + path_.string() + " does not fit this run: stage " +
                            std::to_string(s) + " holds tasks " + std::to_string(span.first) +
                            " to " + std::to_string(span.first + span.count) +
                            ", the run has tasks " + std::to_string(first) + " to " +
                            std::to_string(end) + " there");
    read_offset_ = span.offset;
    replay_left_ = span.count;
    next_task_ = first + span.count;
  } else if (later && end > first) {
    throw JournalMismatch("the journal " + path_.string() + " does not fit this run: stage " +
                          std::to_string(s) + " has no results but a later stage has");
  }
  return replay_left_;
}

std::string TaskJournal::next_replayed() {
  if (replay_left_ == 0) throw std::logic_error("journal: no recorded result left to replay");
  std::string head, body;
  if (!read_at(fd_, read_offset_, record_head, head, path_) ||
      !read_at(fd_, read_offset_ + record_head, read_raw<std::uint32_t>(head.data()), body, path_))
    throw std::runtime_error("the journal " + path_.string() + " changed while it was replayed");
  read_offset_ += record_head + body.size() + 4;
  --replay_left_;
  return body;
}

void TaskJournal::append(std::size_t task, std::string_view payload) {
  if (stage_ == 0 || task != next_task_ || task >= stage_tasks_)
    throw std::logic_error("journal: results must be appended in task order");
  if (payload.size() > max_payload) throw std::length_error("journal: task result too large");
  const std::size_t start = buffer_.size();
  append_raw(buffer_, static_cast<std::uint32_t>(payload.size()));
  append_raw(buffer_, static_cast<std::uint32_t>(stage_ - 1));
  append_raw(buffer_, static_cast<std::uint64_t>(task));
  buffer_.append(payload);
  append_raw(buffer_, crc32(std::string_view(buffer_).substr(start)));
  ++next_task_;
  ++pending_;
  if (buffer_.size() >= flush_bytes || now_seconds() - last_flush_ >= flush_seconds) flush();
}

void TaskJournal::flush(bool sync) {
  if (!buffer_.empty()) {
    write_all(buffer_);
    buffer_.clear();
    records_ += pending_;
    pending_ = 0;
  }
  last_flush_ = now_seconds();
  if (sync && ::fdatasync(fd_) != 0) fail_io("cannot sync the journal", path_);
}

void TaskJournal::write_all(std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(end_ + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail_io("cannot write the journal", path_);
    }
    done += static_cast<std::size_t>(w);
  }
  end_ += done;
}

void merge_shards(const std::vector<std::filesystem::path>& shards, const std::string& identity,
                  const std::filesystem::path& out,
                  const std::vector<std::size_t>& expected_records) {
  std::vector<TaskJournal> in;
  std::size_t stages = 0;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    // Read only: a merge never changes the shards it reads (resume() would cut a damaged
    // journal short, or start a new one over a damaged header).
    in.push_back(TaskJournal::read(shards[i], identity));
    if (i < expected_records.size() && in.back().records() != expected_records[i])
      throw JournalCorrupt(shards[i].string() + ": the journal is corrupt: it holds " +
                           std::to_string(in.back().records()) + " records, its shard.json " +
                           std::to_string(expected_records[i]));
    stages = std::max(stages, in.back().recovered_.size());
  }
  TaskJournal merged = TaskJournal::create(out, identity);
  for (std::size_t s = 0; s < stages; ++s) {
    merged.begin_stage(std::numeric_limits<std::size_t>::max());
    std::size_t next = 0;  // the task the next shard must start with
    for (std::size_t i = 0; i < in.size(); ++i) {
      TaskJournal& shard = in[i];
      if (s >= shard.recovered_.size() || shard.recovered_[s].count == 0) continue;
      const TaskJournal::StageSpan span = shard.recovered_[s];
      if (span.first != next)
        throw JournalMismatch("shard " + std::to_string(i + 1) + " of " +
                              std::to_string(in.size()) + " begins stage " + std::to_string(s) +
                              " at task " + std::to_string(span.first) +
                              ", but the shards before it end at task " + std::to_string(next) +
                              ": an unfinished shard (run it again with --resume)");
      shard.stage_ = s;
      shard.begin_stage(span.first + span.count, span.first);
      for (std::size_t k = 0; k < span.count; ++k) merged.append(next++, shard.next_replayed());
    }
  }
  merged.flush(true);
}

}  // namespace calbench
