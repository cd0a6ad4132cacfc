#include "data/npy.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/read_file.hpp"

static_assert(std::endian::native == std::endian::little,
              "the NPY reader copies little-endian floats as they are");

namespace calbench {
namespace {

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what) {
  throw InputError(file.string() + ": " + what);
}

// The value text of `'key':` in the header dict, up to the next top-level ',' or '}'.
std::string dict_value(const std::string& header, const std::string& key,
                       const std::filesystem::path& file) {
  const std::string quoted = "'" + key + "'";
  auto at = header.find(quoted);
  if (at == std::string::npos) fail(file, "NPY header has no " + quoted + " key");
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos) fail(file, "NPY header: no value for " + quoted);
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  std::size_t end = at;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char ch = header[end];
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == ',' || ch == '}')) break;
  }
  return header.substr(at, end - at);
}

// Rearranges values stored in Fortran (column-major) order into C (row-major) order, as numpy
// reads an array saved with fortran_order True (np.asfortranarray, a transposed view, pandas'
// to_numpy on many frames). C element i with multi-index (j_0, ..., j_(d-1)) is Fortran element
// sum_m j_m * prod_(l < m) shape_l.
template <typename T>
void to_c_order(const std::vector<std::size_t>& shape, std::vector<T>& values) {
  if (shape.size() < 2 || values.empty()) return;
  std::vector<std::size_t> stride(shape.size(), 1);  // Fortran strides, in elements
  for (std::size_t m = 1; m < shape.size(); ++m) stride[m] = stride[m - 1] * shape[m - 1];
  std::vector<T> c_order(values.size());
  std::vector<std::size_t> index(shape.size(), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::size_t at = 0;
    for (std::size_t m = 0; m < shape.size(); ++m) at += index[m] * stride[m];
    c_order[i] = values[at];
    for (std::size_t m = shape.size(); m-- > 0;) {  // the next C multi-index
      if (++index[m] < shape[m]) break;
      index[m] = 0;
    }
  }
  values = std::move(c_order);
}

std::size_t item_size(const std::string& descr) {
  return static_cast<std::size_t>(descr.back() - '0');
}

// The header of an NPY file whose first bytes are `bytes` (at least the magic, the version,
// the header length and the header): the dtype, the order, the shape and where the data start.
struct Header {
  std::string descr;
  bool fortran = false;
  std::vector<std::size_t> shape;
  std::string shape_text;      // as written, for messages
  std::size_t count = 1;       // elements
  std::size_t data_start = 0;  // the data's offset in the file
  std::size_t data_bytes = 0;  // count x the item size
};

// The magic, the version and the header's length; the header text is bytes[start, start + len).
std::pair<std::size_t, std::size_t> header_span(const std::string& bytes,
                                                const std::filesystem::path& file) {
  if (bytes.empty()) fail(file, "the file is empty");
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    fail(file, "not an NPY file (no \\x93NUMPY magic at the start)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  const auto byte = [&](std::size_t i) {
    return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i]));
  };
  if (major == 1) return {10, byte(8) | (byte(9) << 8)};
  if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(file, "NPY header truncated");
    return {12, byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24)};
  }
  fail(file, "NPY version " + std::to_string(major) + " is not supported (1, 2 or 3)");
}

Header parse_header(const std::string& bytes, const std::filesystem::path& file) {
  const auto [header_start, header_len] = header_span(bytes, file);
  if (header_start + header_len > bytes.size()) fail(file, "NPY header truncated");
  const std::string header = bytes.substr(header_start, header_len);

  Header out;
  std::string descr = dict_value(header, "descr", file);
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    fail(file, "NPY descr " + descr + " is not a simple dtype");
  descr = descr.substr(1, descr.size() - 2);
  static const char* const supported[] = {"<f8", "<f4", "<i8", "<i4", "<i2", "|i1",
                                          "<u8", "<u4", "<u2", "|u1", "<i1", "<u1"};
  bool ok = false;
  for (const char* s : supported) ok = ok || descr == s;
  if (!ok)
    fail(file, "dtype " + descr + " is not supported (little-endian float64, float32 or integers)");
  out.descr = descr;
  const std::string order = dict_value(header, "fortran_order", file);
  if (order != "False" && order != "True")
    fail(file, "NPY fortran_order " + order + " is neither True nor False");
  out.fortran = order == "True";
  const std::string shape = dict_value(header, "shape", file);
  out.shape_text = shape;
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    fail(file, "NPY shape " + shape + " is not a tuple");
  std::size_t& count = out.count;
  for (std::size_t i = 1; i + 1 < shape.size();) {
    while (i + 1 < shape.size() && (shape[i] == ' ' || shape[i] == ',')) ++i;
    if (i + 1 >= shape.size()) break;
    std::size_t j = i;
    while (j + 1 < shape.size() && shape[j] >= '0' && shape[j] <= '9') ++j;
    if (j == i) fail(file, "NPY shape " + shape + " is not a tuple of integers");
    // Every product is checked: a crafted shape such as (4, 2^62) would otherwise wrap the
    // element count and pass the size check with a buffer far smaller than the shape says.
    std::size_t extent = 0;
    const auto digits = shape.substr(i, j - i);
    if (digits.size() > 19 || __builtin_mul_overflow(count, extent = std::stoull(digits), &count))
      fail(file, "NPY shape " + shape + " is too large (more elements than fit in memory)");
    out.shape.push_back(extent);
    i = j;
  }
  out.data_start = header_start + header_len;
  if (__builtin_mul_overflow(count, item_size(descr), &out.data_bytes))
    fail(file, "NPY shape " + shape + " is too large (more bytes than fit in memory)");
  return out;
}

}  // namespace

NpyShape read_npy_shape(const std::filesystem::path& file) {
  // Only the header is read (a few hundred bytes); a special file is left to read_npy's error.
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) return {};
  std::ifstream in(file, std::ios::binary);
  std::string bytes(12, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  const auto [header_start, header_len] = header_span(bytes, file);
  if (header_start + header_len > std::filesystem::file_size(file, error) || error)
    fail(file, "NPY header truncated");
  bytes.resize(header_start + header_len);
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  const Header header = parse_header(bytes, file);
  return {header.descr, header.shape};
}

NpyArray read_npy(const std::filesystem::path& file) {
  const FileBytes read = read_file(file, kMaxDataFileBytes);
  if (read.failure == FileBytes::Failure::open) fail(file, "cannot open the file");
  if (!read) fail(file, "cannot read the file (" + read.reason() + ")");
  const std::string& bytes = read.bytes;
  const Header h = parse_header(bytes, file);
  const std::string& descr = h.descr;
  const std::size_t count = h.count, size = item_size(descr), data_start = h.data_start;
  if (bytes.size() - data_start != h.data_bytes)
    fail(file, "NPY data has " + std::to_string(bytes.size() - data_start) + " bytes, the shape " +
                   h.shape_text + " of " + descr + " needs " + std::to_string(h.data_bytes));
  NpyArray out;
  out.descr = descr;
  out.shape = h.shape;
  const bool fortran = h.fortran;
  const char* data = bytes.data() + data_start;
  if (out.is_float()) {
    out.floats.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (size == 8) {
        std::memcpy(&out.floats[i], data + 8 * i, 8);
      } else {
        float f;
        std::memcpy(&f, data + 4 * i, 4);
        out.floats[i] = static_cast<double>(f);
      }
    }
  } else {
    const bool is_signed = descr[1] == 'i';
    out.ints.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      std::uint64_t u = 0;
      for (std::size_t b = 0; b < size; ++b)
        u |= static_cast<std::uint64_t>(static_cast<unsigned char>(data[size * i + b])) << (8 * b);
      if (is_signed && size < 8 && (u >> (8 * size - 1)) != 0) u |= ~std::uint64_t{0} << (8 * size);
      if (!is_signed && size == 8 && u > static_cast<std::uint64_t>(INT64_MAX))
        fail(file,
             "label " + std::to_string(u) + " at row " + std::to_string(i) + " is out of range");
      out.ints[i] = static_cast<std::int64_t>(u);
    }
  }
  if (fortran) {
    to_c_order(out.shape, out.floats);
    to_c_order(out.shape, out.ints);
  }
  return out;
}

namespace {

// The header dict, padded with spaces and a newline so that magic + version + length + header
// is a multiple of 64 bytes.
std::string npy_header(const char* descr, const std::vector<std::size_t>& shape) {
  std::string dims;  // "n, k"; a 1-tuple is "n,"
  for (std::size_t i = 0; i < shape.size(); ++i)
    dims += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string dict =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(dict.size() & 0xff));
  out.push_back(static_cast<char>(dict.size() >> 8));
  return out + dict;
}

template <typename T>
void write_array(const std::filesystem::path& file, const char* descr,
                 const std::vector<std::size_t>& shape, std::span<const T> values) {
  std::size_t count = 1;
  for (std::size_t d : shape) count *= d;
  if (count != values.size())
    throw std::logic_error("write_npy: shape and value count disagree for " + file.string());
  // Atomically, through a private staging file (core/atomic_file.hpp): never through a
  // symbolic link planted at the name, never half-written.
  // The header and the values as they are: no copy of the data (it can be gigabytes).
  const std::string header = npy_header(descr, shape);
  const std::string_view parts[] = {
      header, {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)}};
  try {
    write_file_atomically(file, parts);
  } catch (const std::system_error& error) {
    throw std::runtime_error(file.string() + ": cannot write the NPY file (" +
                             error.code().message() + ")");
  }
}

}  // namespace

void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape,
               std::span<const double> values) {
  write_array(file, "<f8", shape, values);
}

std::string npy_bytes(const std::vector<std::size_t>& shape, std::span<const double> values) {
  std::string out = npy_header("<f8", shape);
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  return out;
}

void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape,
               std::span<const std::int64_t> values) {
  write_array(file, "<i8", shape, values);
}

}  // namespace calbench
