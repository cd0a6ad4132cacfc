#include "core/fft_convolution.hpp"

#include <algorithm>
#include <complex>
#include <string>
#include <unsupported/Eigen/FFT>
#include <vector>

#include "core/error.hpp"

namespace calbench {

namespace {

struct CachedSpectrum {
  std::uint64_t key;
  std::size_t transform, taps;
  std::vector<std::complex<double>> spectrum;
};

constexpr std::size_t max_cached_spectra = 64;

void check_shapes(std::size_t n, std::size_t n2, std::size_t L, std::size_t m1, std::size_t m2) {
  if (n2 != n || L == 0 || L > n || m1 != n - L + 1 || m2 != n - L + 1)
    throw DomainError("valid_pair: signals of " + std::to_string(n) + " and " + std::to_string(n2) +
                      " values, kernel of " + std::to_string(L) + ", outputs of " +
                      std::to_string(m1) + " and " + std::to_string(m2) +
                      ": need equal signals >= kernel >= 1 and outputs of signals - kernel + 1");
}

}  // namespace

struct FftConvolution::Scratch {
  Eigen::FFT<double> fft;
  std::vector<std::complex<double>> signal, signal_spectrum, kernel_spectrum, product;
  std::vector<double> kernel;
  std::vector<CachedSpectrum> cache;

  // The transform of the kernel zero-padded to N, into kernel_spectrum.
  void transform_kernel(std::span<const double> k, std::size_t N) {
    kernel.assign(N, 0.0);
    std::copy(k.begin(), k.end(), kernel.begin());
    fft.fwd(kernel_spectrum, kernel);
  }

  // Outputs L - 1 .. n - 1 of the circular convolution of length N >= n of x1 + i x2 with the
  // kernel whose transform is `spectrum`: output m sums x[(m - j) mod N] k[j], which wraps only
  // for m < L - 1, so these are the valid ones.
  void convolve(std::span<const double> x1, std::span<const double> x2, std::size_t L,
                const std::vector<std::complex<double>>& spectrum, std::span<double> y1,
                std::span<double> y2) {
    const std::size_t n = x1.size(), N = spectrum.size();
    signal.assign(N, {0.0, 0.0});
    for (std::size_t i = 0; i < n; ++i) signal[i] = {x1[i], x2[i]};
    fft.fwd(signal_spectrum, signal);
    product.resize(N);
    for (std::size_t f = 0; f < N; ++f) product[f] = signal_spectrum[f] * spectrum[f];
    fft.inv(signal, product);  // scaled by 1/N
    for (std::size_t i = 0; i + L <= n; ++i) {
      y1[i] = signal[i + L - 1].real();
      y2[i] = signal[i + L - 1].imag();
    }
  }
};

FftConvolution::FftConvolution() : scratch_(std::make_unique<Scratch>()) {}
FftConvolution::~FftConvolution() = default;
FftConvolution::FftConvolution(const FftConvolution&) : scratch_(std::make_unique<Scratch>()) {}
FftConvolution& FftConvolution::operator=(const FftConvolution& other) {
  if (this != &other) scratch_ = std::make_unique<Scratch>();
  return *this;
}
FftConvolution::FftConvolution(FftConvolution&&) noexcept = default;
FftConvolution& FftConvolution::operator=(FftConvolution&&) noexcept = default;

std::size_t FftConvolution::transform_size(std::size_t n) {
  std::size_t best = 1;
  while (best < n) best *= 2;
  // Every 2^a 3^b 5^c in [n, best]: at most a few hundred candidates for the sizes used here.
  for (std::size_t p5 = 1; p5 < best; p5 *= 5)
    for (std::size_t p35 = p5; p35 < best; p35 *= 3) {
      std::size_t m = p35;
      while (m < n) m *= 2;
      best = std::min(best, m);
    }
  return best;
}

void FftConvolution::valid_pair(std::span<const double> x1, std::span<const double> x2,
                                std::span<const double> kernel, std::span<double> y1,
                                std::span<double> y2) {
  check_shapes(x1.size(), x2.size(), kernel.size(), y1.size(), y2.size());
  Scratch& s = *scratch_;
  s.transform_kernel(kernel, transform_size(x1.size()));
  s.convolve(x1, x2, kernel.size(), s.kernel_spectrum, y1, y2);
}

void FftConvolution::valid_pair(std::span<const double> x1, std::span<const double> x2,
                                std::span<const double> kernel, std::span<double> y1,
                                std::span<double> y2, std::uint64_t kernel_key) {
  check_shapes(x1.size(), x2.size(), kernel.size(), y1.size(), y2.size());
  Scratch& s = *scratch_;
  const std::size_t N = transform_size(x1.size()), L = kernel.size();
  for (const CachedSpectrum& c : s.cache)
    if (c.key == kernel_key && c.transform == N && c.taps == L)
      return s.convolve(x1, x2, L, c.spectrum, y1, y2);
  if (s.cache.size() == max_cached_spectra) s.cache.clear();
  s.transform_kernel(kernel, N);
  s.cache.push_back({kernel_key, N, L, s.kernel_spectrum});
  s.convolve(x1, x2, L, s.cache.back().spectrum, y1, y2);
}

void valid_convolution_direct(std::span<const double> x, std::span<const double> kernel,
                              std::span<double> y) {
  const std::size_t L = kernel.size();
  for (std::size_t i = 0; i < y.size(); ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < L; ++j) sum += x[i + L - 1 - j] * kernel[j];
    y[i] = sum;
  }
}

}  // namespace calbench
