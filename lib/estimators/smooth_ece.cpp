#include "estimators/smooth_ece.hpp"

#include <algorithm>
#include <bit>
#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <cstdint>
#include <span>

#include "core/error.hpp"
#include "estimators/kernel_grids.hpp"

namespace calbench {
namespace {

// Python's round() (half to even), which relplot applies to 20/sigma and 10/sigma.
std::size_t py_round(double x) {
  return static_cast<std::size_t>(std::nearbyint(x));
}

std::size_t grid_size(double sigma) {
  return std::max<std::size_t>(2000, py_round(20.0 / sigma)) / 2 + 1;
}

// relplot.smooth_round_to_grid for residuals and unit masses, once per grid size.
void fill_grids(const Sample& s, std::size_t m, KernelGrids& ws, bool binary) {
  if (ws.grid_points == m) return;
  ws.grid_residual.assign(m, 0.0);
  ws.grid_mass.assign(m, 0.0);
  const double scale = static_cast<double>(m - 1);
  for (std::size_t i = 0; i < s.size; ++i) {
    const double f = binary ? s.p[2 * i + 1] : s.confidence[i];
    // c_top (c_1) in population samples
    const double r = f - (binary ? s.outcome(i, 1) : s.outcome(i, s.predicted[i]));
    const double x = f * scale;
    const auto b = std::min<std::size_t>(static_cast<std::size_t>(std::max(x, 0.0)), m - 2);
    const double w = x - static_cast<double>(b);
    ws.grid_residual[b] += (1.0 - w) * r;
    ws.grid_residual[b + 1] += w * r;
    ws.grid_mass[b] += 1.0 - w;
    ws.grid_mass[b + 1] += w;
  }
  ws.grid_points = m;
}

// Node index of position p on the grid reflected at 0 and M-1 without repeating the end nodes.
std::size_t reflect(std::ptrdiff_t p, std::ptrdiff_t m) {
  if (p < 0) return static_cast<std::size_t>(-p);
  if (p > m - 1) return static_cast<std::size_t>(2 * m - 2 - p);
  return static_cast<std::size_t>(p);
}

double interpolate(const std::vector<double>& y, double t) {
  const std::size_t m = y.size();
  const double step = 1.0 / static_cast<double>(m - 1);
  const auto i =
      std::min<std::size_t>(static_cast<std::size_t>(t * static_cast<double>(m - 1)), m - 2);
  const double w = (t - static_cast<double>(i) * step) / step;
  return y[i] * (1.0 - w) + y[i + 1] * w;
}

// smECE_sigma with the mass grids of this sample reused when ws.grid_points says they are current.
double smooth_ece_cached(const Sample& s, double sigma, KernelGrids& ws, bool binary) {
  const std::size_t m = grid_size(sigma);
  fill_grids(s, m, ws, binary);

  // relplot.GaussianKernel.kernel_ev: phi_sigma(t_j - 1/2) at t = numpy.linspace(0, 1, M).
  const double step = 1.0 / static_cast<double>(m - 1);
  const double norm = std::sqrt(2.0 * boost::math::constants::pi<double>()) * sigma;
  const double var = sigma * sigma;
  ws.kernel.resize(m);
  for (std::size_t j = 0; j < m; ++j) {
    const double t = j + 1 == m ? 1.0 : static_cast<double>(j) * step;
    ws.kernel[j] = std::exp(-(t - 0.5) * (t - 0.5) / (2.0 * var)) / norm;
  }
  // Terms below 1e-18 of the peak cannot move a double sum of positive-weight terms.
  const double peak = *std::max_element(ws.kernel.begin(), ws.kernel.end());
  std::size_t jlo = 0, jhi = m;
  while (jlo + 1 < jhi && ws.kernel[jlo] < 1e-18 * peak) ++jlo;
  while (jhi > jlo + 1 && ws.kernel[jhi - 1] < 1e-18 * peak) --jhi;

  // numpy.convolve(ext, kernel, "valid")[M//2 : M//2 + M]: S[i] = sum_j ext(i + M//2 - j) k_j
  // over the kept taps jlo <= j < jhi, ext(p) = grid[reflect(p)]; the positions read are
  // M//2 - (jhi - 1) .. M - 1 + M//2 - jlo, a "valid" convolution of that window with
  // k[jlo, jhi), done by FFT (core/fft_convolution.hpp: rounding error only, of order
  // 1e-16 times the largest smoothed value).
  const auto mm = static_cast<std::ptrdiff_t>(m);
  const auto half = static_cast<std::ptrdiff_t>(m / 2);
  const std::size_t taps = jhi - jlo;
  const std::ptrdiff_t start = half - static_cast<std::ptrdiff_t>(jhi - 1);
  ws.window_residual.resize(m + taps - 1);
  ws.window_mass.resize(m + taps - 1);
  for (std::size_t q = 0; q < m + taps - 1; ++q) {
    const std::size_t node = reflect(start + static_cast<std::ptrdiff_t>(q), mm);
    ws.window_residual[q] = ws.grid_residual[node];
    ws.window_mass[q] = ws.grid_mass[node];
  }
  ws.smooth_residual.resize(m);
  ws.smooth_mass.resize(m);
  // The kernel is a function of sigma alone: its transform is kept under sigma's bits.
  ws.convolution.valid_pair(
      ws.window_residual, ws.window_mass, std::span<const double>(ws.kernel).subspan(jlo, taps),
      ws.smooth_residual, ws.smooth_mass, std::bit_cast<std::uint64_t>(sigma));

  const std::size_t points = std::max<std::size_t>(py_round(10.0 / sigma), 200);
  const double ustep = 1.0 / static_cast<double>(points - 1);
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < points; ++i) {
    const double u = i + 1 == points ? 1.0 : static_cast<double>(i) * ustep;
    const double density = interpolate(ws.smooth_mass, u) + 1e-4;
    const double smoothed = interpolate(ws.smooth_residual, u) / density;
    num += std::abs(smoothed) * density;
    den += density;
  }
  return num / den;
}

}  // namespace

double smooth_ece_at(const Sample& s, double sigma, EstimatorWorkspace& ws, bool binary) {
  if (s.size == 0) return 0.0;
  KernelGrids& grids = ws.scratch<KernelGrids>();
  grids.grid_points = 0;
  return smooth_ece_cached(s, sigma, grids, binary);
}

SmoothEce::SmoothEce(SmoothEceSpec spec) : spec_(spec) {
  if (spec_.bandwidth && !(*spec_.bandwidth > 0.0 && *spec_.bandwidth <= 1.0))
    throw DomainError("smooth_ece bandwidth is " + std::to_string(*spec_.bandwidth) +
                      ", but must be in (0, 1]");
}

double SmoothEce::bandwidth(const Sample& s, EstimatorWorkspace& ws) const {
  if (spec_.bandwidth) return *spec_.bandwidth;
  KernelGrids& grids = ws.scratch<KernelGrids>();
  grids.grid_points = 0;  // a new sample
  // relplot.search_param: a fixed 10-step bisection returning the upper end, kept as is (not
  // Boost's toms748/bisect) because its exact bracket sequence is part of relplot's value.
  const auto too_small = [&](double sigma) {
    return sigma < 0.001 || sigma < smooth_ece_cached(s, sigma, grids, spec_.binary);
  };
  if (too_small(1.0)) return 1.0;
  double hi = 1.0, lo = 0.0;
  for (int step = 0; step < 10; ++step) {
    const double mid = (hi + lo) / 2.0;
    if (too_small(mid))
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

std::optional<std::string> SmoothEce::classes_problem(std::size_t classes) const {
  if (spec_.binary && classes != 2)
    return "scope binary needs K = 2 classes, found K = " + std::to_string(classes);
  return std::nullopt;
}

double SmoothEce::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  if (const auto problem = classes_problem(s.classes)) throw DomainError(*problem);
  if (s.size == 0) return 0.0;
  const double sigma = bandwidth(s, ws);
  if (!spec_.bandwidth) return smooth_ece_cached(s, sigma, ws.scratch<KernelGrids>(), spec_.binary);
  return smooth_ece_at(s, sigma, ws, spec_.binary);
}

}  // namespace calbench
