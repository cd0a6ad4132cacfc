#pragma once
// A reader for NumPy's NPY format, versions 1.0, 2.0 and 3.0
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html): the magic
// "\x93NUMPY", two version bytes, a header length (2 bytes in 1.0, 4 bytes after), a Python
// dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (n, k), }, then the raw data.
//
// Written here (about a hundred lines) rather than taken from a package. Of the Debian packages
// only libxtensor-dev reads NPY from C++ (xtensor/xnpy.hpp), and it would bring xtensor and xtl
// into the dependency set for one file format, with errors that cannot name the offending row;
// cnpy and libnpy are not packaged.
// Only what eval needs is supported: little-endian (or single-byte) numbers, C or Fortran
// order (a Fortran-order array is rearranged into C order, as numpy reads it), dtypes
// f8, f4 and the signed and unsigned integers of 1, 2, 4 and 8 bytes.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace calbench {

struct NpyArray {
  std::string descr;               // as in the header, e.g. "<f8"
  std::vector<std::size_t> shape;  // () is a scalar
  std::vector<double> floats;      // the data, when descr is a float type
  std::vector<std::int64_t> ints;  // the data, when descr is an integer type
  bool is_float() const { return descr.size() >= 2 && descr[1] == 'f'; }
};

// Throws InputError naming the file on anything it cannot read as promised.
NpyArray read_npy(const std::filesystem::path& file);

// The dtype and shape of an NPY file from its header alone, without reading the data (a
// pre-flight's figure); empty for a file that is not a regular file (read_npy says why). Throws
// InputError as read_npy does for a header it cannot read.
struct NpyShape {
  std::string descr;
  std::vector<std::size_t> shape;
};
NpyShape read_npy_shape(const std::filesystem::path& file);

// An NPY 1.0 file of little-endian float64 ('<f8') or int64 ('<i8') values in C order with the
// given shape (external estimators' input, docs/external.md). The header is padded to a
// multiple of 64 bytes, as NumPy writes it. Throws std::runtime_error naming the file when it
// cannot be written.
void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape,
               std::span<const double> values);
void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape,
               std::span<const std::int64_t> values);
// The bytes of the float64 file write_npy writes, for a caller that writes them atomically.
std::string npy_bytes(const std::vector<std::size_t>& shape, std::span<const double> values);

}  // namespace calbench
