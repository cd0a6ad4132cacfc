#pragma once
// Discrete linear convolution of real signals by FFT, numpy.convolve(x, k, "valid") for two
// signals that share one kernel:
//   y[i] = sum_{j < L} x[i + L - 1 - j] k[j],   i < len(x) - L + 1,   L = len(k) <= len(x).
// The kernel estimators (smooth_ece, kde_ece) smooth two grids with one kernel; a direct sum
// costs len(y) L multiply-adds, the FFT O(N log N) with N >= len(x) the smallest 2^a 3^b 5^c
// (kissfft's fast radices). Both signals ride in one complex transform, x1 + i x2: the kernel
// is real, so the real and imaginary parts of the product's inverse are the two convolutions.
//
// Accuracy: rounding only. Each computed output's error is bounded by about u log2(N)
// ||x1 + i x2||_2 ||k||_2 times a small constant (both signals: they share the transform), u =
// 2^-53 (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., 2002, Thm 24.2,
// applied to the three transforms of Cooley-Tukey FFTs). That is an absolute error,
// relative to the size of the largest outputs, not to each output: an output
// that is exactly 0 in the direct sum (a grid node farther than the kernel's support from every
// mass) comes out as a value of order 1e-16 times the largest. tests/unit/test_kernel.cpp measures
// the error against the direct sum.
//
// Eigen's FFT module (unsupported/Eigen/FFT, kissfft back end; a Debian package already used) is
// kept behind this class so that only fft_convolution.cpp includes it; one instance holds its
// scratch buffers and the transform plans, so a thread reuses them without allocating.
#include <cstdint>
#include <memory>
#include <span>

namespace calbench {

class FftConvolution {
 public:
  FftConvolution();
  ~FftConvolution();
  // A copy starts with empty scratch space (workspaces are copied per thread).
  FftConvolution(const FftConvolution&);
  FftConvolution& operator=(const FftConvolution&);
  FftConvolution(FftConvolution&&) noexcept;
  FftConvolution& operator=(FftConvolution&&) noexcept;

  // y1 = x1 * k and y2 = x2 * k as above; x1, x2 of one length n >= len(k) >= 1, y1 and y2 of
  // length n - len(k) + 1 (throws DomainError otherwise).
  void valid_pair(std::span<const double> x1, std::span<const double> x2,
                  std::span<const double> kernel, std::span<double> y1, std::span<double> y2);
  // The same, keeping the kernel's transform between calls under `kernel_key`, the caller's name
  // for the kernel's values (equal keys must mean equal kernels): smooth_ece smooths every
  // resample with the same few kernels, one per bandwidth of its search. Up to 64 transforms
  // are kept; the results are the same bits as without the key.
  void valid_pair(std::span<const double> x1, std::span<const double> x2,
                  std::span<const double> kernel, std::span<double> y1, std::span<double> y2,
                  std::uint64_t kernel_key);

  // The transform length used for signals of length n: the smallest 2^a 3^b 5^c >= n.
  static std::size_t transform_size(std::size_t n);

 private:
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

// The same sums computed directly (the reference the FFT is tested against).
void valid_convolution_direct(std::span<const double> x, std::span<const double> kernel,
                              std::span<double> y);

}  // namespace calbench
