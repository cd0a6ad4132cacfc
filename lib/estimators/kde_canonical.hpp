#pragma once
// `kde_canonical`: the Dirichlet-kernel estimator of the canonical Lp calibration error of
// Popordanoska, Sayer & Blaschko 2022 ("A Consistent and Differentiable Lp Canonical
// Calibration Error Estimator", NeurIPS; tpopordanoska/ece-kde, `get_ece_kde` with
// mc_type "canonical"):
//   kernel centred at p_j, evaluated at p_i: k_b(p_i; p_j) = Dir(p_i; p_j / b + 1), so
//     log k_b(p_i; p_j) = (1/b) sum_k p_jk log p_ik - log B(p_j / b + 1);
//   leave-one-out Nadaraya-Watson estimate of r(p_i) = E[e_y | p_i]:
//     r_i = sum_{j != i} k_b(p_i; p_j) e_{y_j} / sum_{j != i} k_b(p_i; p_j);
//   estimate of E ||r(p) - p||_q^q: S = (1/n) sum_i sum_k |r_ik - p_ik|^q, q = 1 or 2.
// norm l1 reports S (target canonical_l1); norm l2 reports sqrt(S) (target canonical_l2), or S
// itself with `squared` true, as ece_debiased does.
// Bandwidth: a number b > 0, or "loo" (default): the b of the authors' grid
// logspace(-5, -1, 15) ∪ linspace(0.2, 1, 5) that maximises the leave-one-out log-likelihood
// sum_i log((1/(n-1)) sum_{j != i} k_b(p_i; p_j)), the first on ties. Two documented
// departures from the authors' `get_bandwidth`: it subtracts log((n-1) b), not log(n-1) (the
// Dirichlet kernel is already a density in p, so the extra -log b only favours wide kernels),
// and it starts from max_l = 0, so it returns -1 when every log-likelihood is negative.
// Numerics: sums in log space (log-sum-exp per row), so no kernel underflows to a 0/0; log p is
// floored at log(DBL_MIN), so a component exactly 0 gets weight exp(-708 p_jk / b) (0 when
// p_jk = 0 too, as the limit of the density) instead of a NaN from 0 * log 0. Terms below
// e^-50 of the row's largest are left out (under 2e-22 n of the sums that hold it); rows that
// cannot be within e^-50 are screened out before their weights are computed (a bound from
// -KL(p_j, p_i); the same kept terms, the same bits).
// Cost: O(n^2 K) for the inner products plus O(n^2) exponentials per bandwidth tried (20 for
// "loo"; at its small bandwidths screening leaves a row's near neighbours only), with O(n)
// memory: quadratic, like the quadratic SKCE, and only run when asked for.
// n < 2 gives 0 (no neighbour to smooth over). With a fixed b the estimate converges to a
// smoothed error, not to canonical_lq; the bias against the target then includes it.
#include <optional>

#include "estimators/estimator.hpp"

namespace calbench {

// The vector instructions the kernel sums may use: the widest the processor has (AVX-512,
// AVX2 or SSE2), or at most AVX2, or SSE2 only. Every choice gives the same bits; the narrower
// ones exist so that tests can check that on a machine with the wider ones.
enum class KdeCanonicalIsa { widest, avx2, sse2 };

struct KdeCanonicalSpec {
  int power = 1;                    // q: 1 (canonical_l1) or 2 (canonical_l2)
  std::optional<double> bandwidth;  // nullopt: leave-one-out maximum likelihood on the grid
  bool squared = false;             // power 2: report S instead of sqrt(S)
  KdeCanonicalIsa isa = KdeCanonicalIsa::widest;  // not in the JSON: for tests
};

class KdeCanonical final : public Estimator {
 public:
  explicit KdeCanonical(KdeCanonicalSpec spec);  // power 1 or 2, bandwidth > 0 and finite
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override;
  bool vanishes_when_calibrated() const override { return true; }
  const KdeCanonicalSpec& spec() const { return spec_; }

  // The bandwidth "loo" selects on this sample (the fixed one when set).
  double bandwidth(const Sample& sample, EstimatorWorkspace& workspace) const;

 private:
  KdeCanonicalSpec spec_;
};

// The authors' bandwidth grid: logspace(-5, -1, 15) then linspace(0.2, 1, 5).
const std::vector<double>& kde_canonical_bandwidth_grid();

}  // namespace calbench
