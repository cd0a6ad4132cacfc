#include "core/sha256.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <memory>
#include <system_error>

#include "core/error.hpp"
#include "core/read_file.hpp"

namespace calbench {
namespace {

struct DigestContext {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  DigestContext() {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("SHA-256: OpenSSL could not start a digest");
  }
  void update(const void* data, std::size_t size) {
    if (EVP_DigestUpdate(ctx.get(), data, size) != 1)
      throw std::runtime_error("SHA-256: OpenSSL digest update failed");
  }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) != 1)
      throw std::runtime_error("SHA-256: OpenSSL digest failed");
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
      out += digits[digest[i] >> 4];
      out += digits[digest[i] & 15];
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(std::span<const unsigned char> bytes) {
  DigestContext d;
  d.update(bytes.data(), bytes.size());
  return d.hex();
}

std::string sha256_file(const std::filesystem::path& file) {
  // Opened without blocking and checked before a byte is read: a FIFO would wait forever and
  // /dev/zero never ends (core/read_file.hpp refuses them the same way).
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw InputError(file.string() + ": cannot be read (" + std::generic_category().message(errno) +
                     ")");
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    const std::string kind = special_file_kind(file);
    throw InputError(
        file.string() + ": cannot be read (it is " +
        (kind.empty() ? std::string("not a regular file") : kind + ", not a regular file") + ")");
  }
  DigestContext d;
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw InputError(file.string() + ": read failed (" + std::generic_category().message(error) +
                       ")");
    }
    if (n == 0) break;
    d.update(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return d.hex();
}

}  // namespace calbench
