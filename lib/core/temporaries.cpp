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

std::optional<pid_t> temporary_owner(std::string_view name, TemporaryKind kind) {
  if (kind == TemporaryKind::atomic_write) {
    // TARGET.tmp-PID-N
    const std::size_t at = name.rfind(".tmp-");
    if (at == std::string_view::npos || at == 0) return std::nullopt;
    const std::string_view rest = name.substr(at + 5);
    const std::size_t dash = rest.find('-');
    if (dash == std::string_view::npos || !all_digits(rest.substr(dash + 1))) return std::nullopt;
    return parse_pid(rest.substr(0, dash));
  }
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

std::size_t remove_dead_temporaries(const std::filesystem::path& directory, TemporaryKind kind) {
  namespace fs = std::filesystem;
  static std::mutex mutex;
  static std::set<std::pair<std::string, int>> scanned;
  {
    std::error_code ec;
    const fs::path key = fs::weakly_canonical(fs::absolute(directory, ec), ec);
    const std::lock_guard lock(mutex);
    if (!scanned.insert({key.string(), static_cast<int>(kind)}).second) return 0;
  }
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path path = it->path();
    const auto pid = temporary_owner(path.filename().string(), kind);
    if (!pid || *pid == ::getpid() || !process_is_gone(*pid)) continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;
    std::error_code ignored;
    if (kind == TemporaryKind::atomic_write && S_ISREG(st.st_mode)) {
      if (::unlink(path.c_str()) == 0) ++removed;
    } else if (kind == TemporaryKind::temporary_directory && S_ISDIR(st.st_mode)) {
      // remove_all does not follow the symbolic links it finds inside.
      if (fs::remove_all(path, ignored) > 0 && !ignored) ++removed;
    }
  }
  return removed;
}

}  // namespace calbench
