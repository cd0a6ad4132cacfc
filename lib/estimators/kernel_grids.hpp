#pragma once
// The kernel estimators' scratch (smooth_ece.cpp, kde_ece.cpp), one per workspace
// (EstimatorWorkspace::scratch<KernelGrids>()): a grid of residual and unit masses, the sampled
// kernel, the grid nodes a convolution reads and the smoothed grids.
#include <cstddef>
#include <vector>

#include "core/fft_convolution.hpp"

namespace calbench {

struct KernelGrids {
  std::vector<double> grid_residual, grid_mass, kernel, smooth_residual, smooth_mass;
  std::vector<double> window_residual, window_mass;  // the grid nodes a convolution reads
  FftConvolution convolution;
  std::size_t grid_points = 0;  // size the two mass grids were last filled for (0: stale)
};

}  // namespace calbench
