#pragma once
// Task results as bytes, for the run journal (core/journal.hpp): a value written by ByteWriter
// and read back by ByteReader has the same bits, so a resumed run folds exactly the numbers
// the interrupted one computed. One `serialize(archive, value)` per record type lists its
// members once for both directions (the Boost.Serialization idiom):
//
//   template <typename Archive>
//   void serialize(Archive& a, Interval& x) { a(x.lo, x.hi); }
//
// It must be declared in the value type's namespace (calbench), where the archives find it.
// Numbers, enums, strings, vectors, optionals and arrays are built in. The bytes are the host's
// (little-endian, checked below): a journal is resumed by the same build on the same kind of
// machine, which the journal's identity (config hash, version, revision) already requires.
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace calbench {

static_assert(std::endian::native == std::endian::little,
              "the run journal stores numbers in little-endian byte order");

class ByteWriter {
 public:
  template <typename... T>
  void operator()(const T&... values) {
    (put(values), ...);
  }
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  template <typename T>
  void put(const T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      char raw[sizeof(T)];
      std::memcpy(raw, &v, sizeof(T));
      bytes_.append(raw, sizeof(T));
    } else {
      // Record types list their members through serialize(); writing does not modify them.
      serialize(*this, const_cast<T&>(v));
    }
  }
  void put(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    bytes_.append(s);
  }
  template <typename T>
  void put(const std::vector<T>& v) {
    put(static_cast<std::uint64_t>(v.size()));
    for (const auto& x : v) put(x);
  }
  void put(const std::vector<bool>& v) {
    put(static_cast<std::uint64_t>(v.size()));
    for (bool x : v) put(x);
  }
  template <typename T>
  void put(const std::optional<T>& v) {
    put(v.has_value());
    if (v) put(*v);
  }
  template <typename T, std::size_t N>
  void put(const std::array<T, N>& v) {
    for (const auto& x : v) put(x);
  }

  std::string bytes_;
};

// Reading past the end, or a length larger than the bytes left, is a std::runtime_error: the
// journal's checksums make it a bug, not a torn file.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <typename... T>
  void operator()(T&... values) {
    (get(values), ...);
  }
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  void need(std::size_t n) const {
    if (n > bytes_.size() - pos_) throw std::runtime_error("journal record shorter than its type");
  }
  template <typename T>
  void get(T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      need(sizeof(T));
      std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
      pos_ += sizeof(T);
    } else {
      serialize(*this, v);
    }
  }
  std::size_t length() {
    std::uint64_t n = 0;
    get(n);
    need(0);
    if (n > bytes_.size() - pos_) throw std::runtime_error("journal record shorter than its type");
    return static_cast<std::size_t>(n);
  }
  void get(std::string& s) {
    const std::size_t n = length();
    s.assign(bytes_.substr(pos_, n));
    pos_ += n;
  }
  template <typename T>
  void get(std::vector<T>& v) {
    const std::size_t n = length();  // every element takes at least one byte
    v.resize(n);
    for (auto& x : v) get(x);
  }
  void get(std::vector<bool>& v) {
    const std::size_t n = length();
    v.assign(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      bool x = false;
      get(x);
      v[i] = x;
    }
  }
  template <typename T>
  void get(std::optional<T>& v) {
    bool present = false;
    get(present);
    if (!present) {
      v.reset();
      return;
    }
    T x{};
    get(x);
    v = std::move(x);
  }
  template <typename T, std::size_t N>
  void get(std::array<T, N>& v) {
    for (auto& x : v) get(x);
  }

  std::string_view bytes_;
  std::size_t pos_ = 0;
};

template <typename T>
std::string to_bytes(const T& value) {
  ByteWriter w;
  w(value);
  return w.take();
}

template <typename T>
T from_bytes(std::string_view bytes) {
  ByteReader r(bytes);
  T value{};
  r(value);
  if (!r.at_end()) throw std::runtime_error("journal record longer than its type");
  return value;
}

}  // namespace calbench
