#include "core/atomic_file.hpp"

#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <system_error>

namespace calbench {

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  namespace fs = std::filesystem;
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  fs::path tmp = target;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  fs::rename(tmp, target);
}

}  // namespace calbench
