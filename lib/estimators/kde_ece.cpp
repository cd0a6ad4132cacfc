#include "estimators/kde_ece.hpp"

#include <algorithm>
#include <cmath>

#include "estimators/kernel_grids.hpp"

namespace calbench {
namespace {

constexpr std::size_t grid_nodes = 16384;  // 2^14, theirs
constexpr double grid_lo = -0.6, grid_hi = 1.6;

// Linear binning (KDEpy's linear_binning) of the reflected data set onto the grid; each
// original point carries weight 1 and its mirror image weight 1.
void bin_reflected(double c, double weight, std::vector<double>& grid, double dx) {
  const double mirrored = c < 0.5 ? -c : 2.0 - c;
  for (const double x : {c, mirrored}) {
    const double pos = (x - grid_lo) / dx;
    const auto b =
        std::min<std::size_t>(static_cast<std::size_t>(std::max(pos, 0.0)), grid_nodes - 2);
    const double w = pos - static_cast<double>(b);
    grid[b] += (1.0 - w) * weight;
    grid[b + 1] += w * weight;
  }
}

double population_sd(const std::vector<double>& x, std::size_t count) {
  if (count == 0) return 0.0;
  double mean = 0.0;
  for (std::size_t i = 0; i < count; ++i) mean += x[i];
  mean /= static_cast<double>(count);
  double ss = 0.0;
  for (std::size_t i = 0; i < count; ++i) ss += (x[i] - mean) * (x[i] - mean);
  return std::sqrt(ss / static_cast<double>(count));
}

}  // namespace

double KdeEce::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  if (s.size == 0) return 0.0;
  const double dx = (grid_hi - grid_lo) / static_cast<double>(grid_nodes - 1);
  // values[0..m): confidences of correct rows; values[m..n): the others.
  ws.values.resize(s.size);
  KernelGrids& grids = ws.scratch<KernelGrids>();
  std::size_t m = 0;
  for (std::size_t i = 0; i < s.size; ++i)
    if (s.correct(i)) ws.values[m++] = std::clamp(s.confidence[i], 1e-256, 1.0 - 1e-256);
  std::size_t rest = m;
  for (std::size_t i = 0; i < s.size; ++i)
    if (!s.correct(i)) ws.values[rest++] = std::clamp(s.confidence[i], 1e-256, 1.0 - 1e-256);

  const double shrink = std::pow(2.0 * static_cast<double>(s.size), -0.2);
  double sd = population_sd(ws.values, m);
  if (m < 2 || sd == 0.0) sd = population_sd(ws.values, s.size);
  const double h = std::max(sd * shrink, 2.0 * dx);

  grids.grid_points = 0;                        // smooth_ece's grids are reused here
  grids.grid_residual.assign(grid_nodes, 0.0);  // binned correct confidences
  grids.grid_mass.assign(grid_nodes, 0.0);      // binned all confidences
  for (std::size_t i = 0; i < s.size; ++i) {
    if (i < m) bin_reflected(ws.values[i], 1.0, grids.grid_residual, dx);
    bin_reflected(ws.values[i], 1.0, grids.grid_mass, dx);
  }

  // Triweight kernel with sd h on the grid offsets, as densities.
  const double support = 3.0 * h;
  const auto half = static_cast<std::ptrdiff_t>(support / dx);
  grids.kernel.resize(static_cast<std::size_t>(2 * half + 1));
  for (std::ptrdiff_t k = -half; k <= half; ++k) {
    const double u = static_cast<double>(k) * dx / support;
    const double v = 1.0 - u * u;
    grids.kernel[static_cast<std::size_t>(k + half)] =
        u * u < 1.0 ? 35.0 / 32.0 * v * v * v / support : 0.0;
  }

  // Output nodes with 0 <= x <= 1; the KDEs are zeroed at x <= 0 and x >= 1, and doubled
  // (2 / (2 count) per unit mass).
  const auto first = static_cast<std::ptrdiff_t>(std::ceil(-grid_lo / dx));
  const auto last = static_cast<std::ptrdiff_t>(std::floor((1.0 - grid_lo) / dx));
  const double perc = static_cast<double>(m) / static_cast<double>(s.size);
  const double norm_correct = m > 0 ? 1.0 / static_cast<double>(m) : 0.0;
  const double norm_all = 1.0 / static_cast<double>(s.size);
  // f(x_j) = sum_k grid[j - k] kernel[k + half], |k| <= half: for the output nodes first..last
  // a "valid" convolution of the grid window first - half .. last + half (nodes outside the
  // grid hold no mass), by FFT like KDEpy's (core/fft_convolution.hpp: rounding error only,
  // of order 1e-16 times the largest density, far below the 1e-6 threshold below).
  const auto nodes = static_cast<std::ptrdiff_t>(grid_nodes);
  const auto outputs = static_cast<std::size_t>(last - first + 1);
  const std::size_t window = outputs + grids.kernel.size() - 1;
  grids.window_residual.assign(window, 0.0);
  grids.window_mass.assign(window, 0.0);
  for (std::size_t q = 0; q < window; ++q) {
    const std::ptrdiff_t node = first - half + static_cast<std::ptrdiff_t>(q);
    if (node < 0 || node >= nodes) continue;
    grids.window_residual[q] = grids.grid_residual[static_cast<std::size_t>(node)];
    grids.window_mass[q] = grids.grid_mass[static_cast<std::size_t>(node)];
  }
  grids.smooth_residual.resize(outputs);
  grids.smooth_mass.resize(outputs);
  grids.convolution.valid_pair(grids.window_residual, grids.window_mass, grids.kernel,
                               grids.smooth_residual, grids.smooth_mass);
  double num = 0.0, den = 0.0, prev_integrand = 0.0, prev_density = 0.0;
  double prev_x = 0.0;
  bool started = false;
  for (std::ptrdiff_t j = first; j <= last; ++j) {
    const double x = grid_lo + static_cast<double>(j) * dx;
    double f1 = 0.0, f = 0.0;
    if (x > 0.0 && x < 1.0) {
      f1 = grids.smooth_residual[static_cast<std::size_t>(j - first)] * norm_correct;
      f = grids.smooth_mass[static_cast<std::size_t>(j - first)] * norm_all;
    }
    double integrand = prev_integrand;
    if (std::max(f1, f) > 1e-6) {
      const double acc = f > 0.0 ? std::min(perc * f1 / f, 1.0) : 1.0;
      integrand = std::abs(x - acc) * f;
    } else if (!started) {
      integrand = 0.0;
    }
    if (started) {
      num += (x - prev_x) * (integrand + prev_integrand) / 2.0;
      den += (x - prev_x) * (f + prev_density) / 2.0;
    }
    started = true;
    prev_x = x;
    prev_integrand = integrand;
    prev_density = f;
  }
  return den > 0.0 ? num / den : 0.0;
}

}  // namespace calbench
