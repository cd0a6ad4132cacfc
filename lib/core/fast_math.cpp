#include "core/fast_math.hpp"

namespace calbench::fast {

// Both functions first test the whole input (a cheap vectorised pass), then either run the
// vectorised loop with no tests or, when any element needs the library fallback (rare), the
// scalar functions. Testing before writing is what lets in and out be the same array.
// The tests use & and a double flag set by a select rather than && and a bool: a branch, or a
// bool or integer reduction of double comparisons, stops GCC 12 from vectorising the loop.

__attribute__((target_clones("avx2", "default"))) void log_bulk(const double* in, double* out,
                                                                std::size_t n) {
  double special = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = in[i];
    special = (x >= 0x1p-1022) & (x <= 0x1.fffffffffffffp1023) ? special : 1.0;
  }
  if (special != 0.0) {
    for (std::size_t i = 0; i < n; ++i) out[i] = log(in[i]);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = log_normal(in[i]);
}

__attribute__((target_clones("avx2", "default"))) void exp_bulk(const double* in, double* out,
                                                                std::size_t n) {
  double special = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = in[i];
    special = (x >= -708.0) & (x <= 709.0) ? special : 1.0;
  }
  if (special != 0.0) {
    for (std::size_t i = 0; i < n; ++i) out[i] = exp(in[i]);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = exp_in_range(in[i]);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void exp_bulk_in_range(
    const double* in, double* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = exp_in_range(in[i]);
}

}  // namespace calbench::fast
