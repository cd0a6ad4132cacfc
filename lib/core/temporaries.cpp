#include "core/temporaries.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <mutex>
#include <set>
#include <utility>

namespace calbench {
namespace {

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

std::optional<pid_t> parse_pid(std::string_view text) {
  if (!all_digits(text) || text.size() > 10) return std::nullopt;
  long long value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  if (value <= 0 || value > 0x7fffffff) return std::nullopt;
  return static_cast<pid_t>(value);
}

}  // namespace

std::optional<pid_t> staging_owner(std::string_view name, std::string_view target_name) {
  // TARGET.tmp-calbench-PID-XXXXXX
  if (target_name.empty() || !name.starts_with(target_name)) return std::nullopt;
  std::string_view rest = name.substr(target_name.size());
  if (!rest.starts_with(staging_infix)) return std::nullopt;
  rest = rest.substr(staging_infix.size());
  const std::size_t dash = rest.find('-');
  if (dash == std::string_view::npos || rest.size() - dash - 1 != 6) return std::nullopt;
  for (const char c : rest.substr(dash + 1))
    if (!std::isalnum(static_cast<unsigned char>(c))) return std::nullopt;
  return parse_pid(rest.substr(0, dash));
}

std::optional<pid_t> temporary_owner(std::string_view name, TemporaryKind /*kind*/) {
  // calbench-WORD-PID-XXXXXX: WORD lower-case letters, XXXXXX mkdtemp's six characters (or
  // Python's tempfile.mkdtemp's eight)
  if (!name.starts_with(temporary_directory_prefix)) return std::nullopt;
  std::string_view rest = name.substr(temporary_directory_prefix.size());
  const std::size_t word = rest.find('-');
  if (word == 0 || word == std::string_view::npos) return std::nullopt;
  for (const char c : rest.substr(0, word))
    if (c < 'a' || c > 'z') return std::nullopt;
  rest = rest.substr(word + 1);
  const std::size_t dash = rest.find('-');
  if (dash == std::string_view::npos || rest.size() - dash - 1 < 6) return std::nullopt;
  for (const char c : rest.substr(dash + 1))
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return std::nullopt;
  return parse_pid(rest.substr(0, dash));
}

bool process_is_gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

namespace {

// At most once per (key, what) per process: a command writing many files scans once.
bool first_scan(const std::filesystem::path& path, int what) {
  namespace fs = std::filesystem;
  static std::mutex mutex;
  static std::set<std::pair<std::string, int>> scanned;
  std::error_code ec;
  const fs::path key = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const std::lock_guard lock(mutex);
  return scanned.insert({key.string(), what}).second;
}

// The entry at `path` when this user owns it and it is of the type `mode_type` (S_IFREG,
// S_IFDIR), not followed through a symbolic link.
bool own_entry_of_type(const std::filesystem::path& path, mode_t mode_type) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && st.st_uid == ::geteuid() &&
         (st.st_mode & S_IFMT) == mode_type;
}

}  // namespace

std::size_t remove_dead_temporaries(const std::filesystem::path& directory, TemporaryKind kind) {
  namespace fs = std::filesystem;
  if (!first_scan(directory, static_cast<int>(kind))) return 0;
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path path = it->path();
    const auto pid = temporary_owner(path.filename().string(), kind);
    if (!pid || *pid == ::getpid() || !process_is_gone(*pid)) continue;
    if (!own_entry_of_type(path, S_IFDIR)) continue;
    // remove_all does not follow the symbolic links it finds inside.
    std::error_code ignored;
    if (fs::remove_all(path, ignored) > 0 && !ignored) ++removed;
  }
  return removed;
}

std::size_t remove_dead_staging(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  if (!first_scan(target, -1)) return 0;
  const std::string target_name = target.filename().string();
  const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path path = it->path();
    const auto pid = staging_owner(path.filename().string(), target_name);
    if (!pid || *pid == ::getpid() || !process_is_gone(*pid)) continue;
    if (own_entry_of_type(path, S_IFREG) && ::unlink(path.c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace calbench
