#pragma once
// `smooth_ece`: the smooth ECE of Błasiok & Nakkiran 2023 ("Smooth ECE: Principled reliability
// diagrams via kernel smoothing"), computed exactly as their `relplot` package (1.0.3,
// apple/ml-calibration, relplot.metrics.smECE / smECE_sigma) computes it, so that it
// reproduces relplot's numbers (tests: reference.json `smece*`, 1e-9).
//
// Scope top (default): as relplot.multiclass_logits_to_confidences: f_i = max_k p_ik,
// o_i = 1{argmax p_i = y_i} (lowest index on ties), residual r_i = f_i - o_i.
// Scope binary (K = 2 only): relplot.smECE(f = p_i1, y = 1{y_i = 1}), the binary smooth ECE of
// the positive class, as relplot's own examples and probmetrics' binary case call it.
//
// At bandwidth sigma (relplot.smooth_ece):
//   M = floor(max(2000, round(20/sigma)) / 2) + 1 grid nodes g_m = m/(M-1);
//   masses are split linearly onto the grid: node b = clamp(floor(f(M-1)), 0, M-2) gets
//   (1-w) and node b+1 gets w, w = f(M-1) - b (relplot.smooth_round_to_grid);
//   the kernel is the Gaussian density phi_sigma sampled at t_j - 1/2, t_j = j/(M-1), j < M
//   (so its support is cut at |d| <= 1/2, and it is not normalised by the grid step);
//   the grids are reflected at 0 and 1 *without* repeating the end nodes (relplot's
//   `[flip(v)[:-1], v, flip(v)[1:]]`), so a mass exactly at 0 or 1 gets about half the kernel
//   mass an interior one gets — a relplot artefact that is reproduced on purpose;
//   S_r(g_m) = sum_j ext_r[m + M//2 - j] k_j, likewise S_1 for unit masses;
//   both are linearly interpolated at T = max(200, round(10/sigma)) points u_i = i/(T-1), and
//   smECE_sigma = sum_i |S_r(u_i)| / sum_i (S_1(u_i) + 1e-4)   (relplot's eps = 1e-4 is added
//   to an unnormalised density, so it matters only for tiny n).
// Fixed point (relplot.smECE): sigma* from relplot.search_param: sigma = 1 if
// 1 < smECE_1; otherwise 10 bisection steps on [0, 1] of the predicate
// "sigma < 0.001 or sigma < smECE_sigma", returning the upper end; the value is smECE_{sigma*}.
// The continuous definition (reflected kernel with boundary nodes doubled, exact integral) differs
// from this by up to 0.05 on data with many confidences at exactly 0 or 1 (CONVENTIONS.md §6).
//
// Cost: O(n) to fill the grid once per distinct M, and per evaluated sigma one FFT convolution
// of the reflected grid window (length M + taps - 1 <= 2M - 1, taps the kernel nodes above 1e-18
// of its peak, ~9 sigma each side) with the kernel: O(M log M) instead of the direct sum's
// O(M * taps). The FFT changes the smoothed grids by rounding only (core/fft_convolution.hpp;
// smECE within 1e-15 relative of the direct sum on the reference data, tests/unit/test_kernel.cpp).
// The fixed point evaluates 12 sigmas.
// Target: its own population value.
#include <optional>

#include "estimators/estimator.hpp"

namespace calbench {

struct SmoothEceSpec {
  std::optional<double> bandwidth;  // empty: the fixed point; else sigma in (0, 1]
  bool binary = false;              // scope binary: p_1 against 1{y = 1} (K = 2)
};

class SmoothEce final : public Estimator {
 public:
  explicit SmoothEce(SmoothEceSpec spec);
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return std::nullopt; }
  bool vanishes_when_calibrated() const override { return true; }
  std::optional<std::string> classes_problem(std::size_t classes) const override;
  // The bandwidth used on this sample: the fixed point or the given one.
  double bandwidth(const Sample& sample, EstimatorWorkspace& workspace) const;
  const SmoothEceSpec& spec() const { return spec_; }

 private:
  SmoothEceSpec spec_;
};

// relplot.smooth_ece on the top-label (or, with `binary`, the positive-class) scope of `sample`
// at bandwidth sigma.
double smooth_ece_at(const Sample& sample, double sigma, EstimatorWorkspace& workspace,
                     bool binary = false);

}  // namespace calbench
