#include "fit/empirical_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/task_kernel.hpp"
#include "fit/penalised_logistic.hpp"
#include "generators/ziggurat.hpp"

namespace calbench {
namespace {

constexpr double curve_logit_bound = 15.0;  // knots within +-15 (z within 3e-7 of 0 or 1)
constexpr double inf = std::numeric_limits<double>::infinity();

// Row i's log-probabilities as the generator keeps them (normalised, at most
// empirical_log_span below the row's largest).
void row_logs(const Sample& data, std::size_t i, std::span<double> out) {
  const auto p = data.row(i);
  double sum = 0.0, top = 0.0;
  for (double v : p) {
    sum += v;
    top = std::max(top, v);
  }
  const double floor = std::log(top / sum) - empirical_log_span;
  for (std::size_t k = 0; k < p.size(); ++k) out[k] = std::max(std::log(p[k] / sum), floor);
}

// ---- the curve -----------------------------------------------------------------------------

// The B-spline basis at every row (n x m).
Eigen::MatrixXd basis_matrix(const std::vector<double>& t, const std::vector<double>& knots) {
  const std::size_t m = spline_basis_size(knots.size());
  Eigen::MatrixXd B(static_cast<Eigen::Index>(t.size()), static_cast<Eigen::Index>(m));
  std::vector<double> row(m);
  for (std::size_t i = 0; i < t.size(); ++i) {
    spline_basis(knots, t[i], row);
    for (std::size_t j = 0; j < m; ++j)
      B(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = row[j];
  }
  return B;
}

// The offsets u_i = t_i clamped to the knots.
Eigen::VectorXd clamped(const std::vector<double>& t, const std::vector<double>& knots,
                        const std::vector<std::size_t>& rows) {
  Eigen::VectorXd u(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t r = 0; r < rows.size(); ++r)
    u(static_cast<Eigen::Index>(r)) = std::clamp(t[rows[r]], knots.front(), knots.back());
  return u;
}

std::vector<std::size_t> all_rows(std::size_t n) {
  std::vector<std::size_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = i;
  return out;
}

LogitSpline fit_on(const CurveData& data, const std::vector<double>& knots, double penalty,
                   const Eigen::MatrixXd& B_all, const std::vector<std::size_t>& rows) {
  Eigen::MatrixXd B(static_cast<Eigen::Index>(rows.size()), B_all.cols());
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    B.row(static_cast<Eigen::Index>(r)) = B_all.row(static_cast<Eigen::Index>(rows[r]));
    y(static_cast<Eigen::Index>(r)) = data.y[rows[r]];
  }
  const Eigen::VectorXd beta = penalised_logistic(B, clamped(data.t, knots, rows), y, penalty);
  return {knots, std::vector<double>(beta.data(), beta.data() + beta.size())};
}

double log_likelihood(const LogitSpline& curve, const CurveData& data,
                      const std::vector<std::size_t>& rows) {
  double out = 0.0;
  for (std::size_t i : rows)
    out += bernoulli_log_likelihood(calibrated_logit(curve, data.t[i]), data.y[i]);
  return out;
}

// The curve's mean distance from the diagonal over the rows, mean_i |g(t_i) - sigmoid(t_i)|,
// with its coefficients scaled by kappa.
double distance_from_diagonal(const LogitSpline& curve, const CurveData& data, double kappa) {
  LogitSpline scaled = curve;
  for (double& c : scaled.coefficients) c *= kappa;
  const auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  double sum = 0.0;
  for (double t : data.t) sum += std::abs(sigmoid(calibrated_logit(scaled, t)) - sigmoid(t));
  return sum / static_cast<double>(data.t.size());
}

// Step 4 of the fit (empirical_fit.hpp): the bootstrap estimate of the noise bias of the curve's
// distance from the diagonal, and the scaled curve when it is positive. Refits in parallel,
// each from its own stream (purpose bootstrap, replicate = resample), reduced in order.
void correct_noise(EmpiricalFit& out, const CurveData& data, const std::vector<double>& knots,
                   const Eigen::MatrixXd& B, const EmpiricalFitOptions& options) {
  const std::size_t n = data.t.size(), R = options.noise_resamples;
  LogitSpline& curve = out.spec.calibration;
  out.distance = distance_from_diagonal(curve, data, 1.0);
  out.distance_bootstrap = out.distance;
  if (R == 0 || is_identity(curve)) return;
  std::vector<double> slots(R);
  for_each_index(R, [&](std::size_t r) {
    Engine engine = make_engine({options.seed, 2, r, Purpose::bootstrap});
    std::vector<std::size_t> rows(n);
    for (std::size_t& i : rows)
      i = std::min(n - 1,
                   static_cast<std::size_t>(uniform_open01(engine) * static_cast<double>(n)));
    slots[r] = distance_from_diagonal(fit_on(data, knots, out.penalty, B, rows), data, 1.0);
  });
  double mean = 0.0;
  for (double d : slots) mean += d;
  out.distance_bootstrap = mean / static_cast<double>(R);
  const double target = 2.0 * out.distance - out.distance_bootstrap;
  if (!(target < out.distance)) return;
  double lo = 0.0, hi = 1.0;
  if (distance_from_diagonal(curve, data, 0.0) >= target) {
    hi = 0.0;
  } else {
    for (int step = 0; step < 50; ++step) {
      const double mid = 0.5 * (lo + hi);
      (distance_from_diagonal(curve, data, mid) < target ? lo : hi) = mid;
    }
  }
  out.shrinkage = hi;
  for (double& c : curve.coefficients) c *= hi;
}

// ---- the bandwidth -------------------------------------------------------------------------

// Each score's confidence_shift: (E_h[max p] - mean max p) / SE(mean max p), by 4 noise draws
// per row, the same standard normals for every h (common random numbers, so the shifts are
// smooth in h and their noise is far below the data's standard error). Rows in parallel, each
// from its own stream (purpose split, replicate = row), summed in row order.
void confidence_shifts(const Sample& data, std::vector<BandwidthScore>& scores,
                       std::uint64_t seed) {
  constexpr std::size_t draws = 4;
  const std::size_t n = data.size, K = data.classes, G = scores.size();
  std::vector<double> slots(n * G);
  for_each_index(n, [&](std::size_t i) {
    Engine engine = make_engine({seed, 1, i, Purpose::split});
    std::vector<double> logs(K), noise(K), l(K);
    row_logs(data, i, logs);
    const double z0 = *std::max_element(data.row(i).begin(), data.row(i).end());
    for (std::size_t d = 0; d < draws; ++d) {
      for (double& e : noise) e = standard_normal(engine);
      for (std::size_t g = 0; g < G; ++g) {
        double top = -inf;
        for (std::size_t k = 0; k < K; ++k)
          top = std::max(top, l[k] = logs[k] + scores[g].bandwidth * noise[k]);
        double sum = 0.0;
        for (double v : l) sum += std::exp(v - top);
        slots[i * G + g] += (1.0 / sum - z0) / static_cast<double>(draws);
      }
    }
  });
  double mean = 0.0, square = 0.0;
  for (double z : data.confidence) {
    mean += z;
    square += z * z;
  }
  const double nd = static_cast<double>(n);
  mean /= nd;
  const double se = std::sqrt(std::max(square / nd - mean * mean, 0.0) / nd);
  for (std::size_t g = 0; g < G; ++g) {
    double shift = 0.0;
    for (std::size_t i = 0; i < n; ++i) shift += slots[i * G + g];
    shift /= nd;
    scores[g].confidence_shift = se > 0.0 ? shift / se : (shift == 0.0 ? 0.0 : inf);
  }
}

std::vector<BandwidthScore> bandwidth_scores(const Sample& data,
                                             const EmpiricalFitOptions& options) {
  const std::size_t n = data.size, K = data.classes;
  std::vector<double> grid = options.bandwidths;
  if (grid.empty())
    for (int j = 0; j < 18; ++j) grid.push_back(0.005 * std::pow(1.5, j));
  // Centred-log-ratio coordinates of the rows, logs held within the span of the top.
  std::vector<double> x(n * K), logs(K);
  for (std::size_t i = 0; i < n; ++i) {
    row_logs(data, i, logs);
    const double top = *std::max_element(logs.begin(), logs.end());
    double mean = 0.0;
    for (double& l : logs) {
      l = std::max(l, top - options.bandwidth_span);
      mean += l;
    }
    mean /= static_cast<double>(K);
    for (std::size_t k = 0; k < K; ++k) x[i * K + k] = logs[k] - mean;
  }
  const std::size_t m = std::min(n, options.bandwidth_rows);
  const std::size_t G = grid.size();
  const double dim = static_cast<double>(K - 1);
  std::vector<double> slots(m * G);
  for_each_index(m, [&](std::size_t r) {
    const std::size_t e = r * n / m;  // evaluation rows spread evenly over the data
    std::vector<double> d2;
    d2.reserve(n - 1);
    double dmin = inf;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == e) continue;
      double d = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        const double diff = x[e * K + k] - x[j * K + k];
        d += diff * diff;
      }
      d2.push_back(d);
      dmin = std::min(dmin, d);
    }
    for (std::size_t g = 0; g < G; ++g) {
      const double h2 = grid[g] * grid[g];
      double acc = 0.0;
      for (double d : d2) {
        // exp of an argument below -746 is exactly +0 (the smallest subnormal is e^-744.4), and
        // adding +0 leaves the sum's bits unchanged: skipping it avoids glibc's slow underflow
        // path (8 % of fit's time at 20,000 x 10, docs/performance.md).
        const double a = -(d - dmin) / (2.0 * h2);
        if (a > -746.0) acc += std::exp(a);
      }
      slots[r * G + g] = -dmin / (2.0 * h2) + std::log(acc) - std::log(static_cast<double>(n - 1)) -
                         0.5 * dim * std::log(2.0 * std::numbers::pi * h2);
    }
  });
  std::vector<BandwidthScore> out;
  for (std::size_t g = 0; g < G; ++g) {
    double sum = 0.0;
    for (std::size_t r = 0; r < m; ++r) sum += slots[r * G + g];  // in order: same bits always
    out.push_back({grid[g], sum / static_cast<double>(m), 0.0});
  }
  confidence_shifts(data, out, options.seed);
  return out;
}

}  // namespace

CurveData curve_data(const Sample& data) {
  const std::size_t K = data.classes;
  CurveData out;
  std::vector<double> logs(K);
  for (std::size_t i = 0; i < data.size; ++i) {
    row_logs(data, i, logs);
    std::size_t top = 0;
    out.t.push_back(top_label_logit(logs, top));
    out.y.push_back(data.label[i] == top ? 1.0 : 0.0);
  }
  return out;
}

std::vector<double> quantile_knots(std::vector<double> t, std::size_t count) {
  for (double& v : t) v = std::clamp(v, -curve_logit_bound, curve_logit_bound);
  std::sort(t.begin(), t.end());
  std::vector<double> out;
  if (t.empty() || count < 2) return out;
  const double lo = 0.005, hi = 0.995;
  for (std::size_t j = 0; j < count; ++j) {
    const double q = lo + (hi - lo) * static_cast<double>(j) / static_cast<double>(count - 1);
    const double position = q * static_cast<double>(t.size() - 1);
    const auto below = static_cast<std::size_t>(position);
    const double frac = position - static_cast<double>(below);
    const double v = below + 1 < t.size() ? t[below] + frac * (t[below + 1] - t[below]) : t[below];
    if (out.empty() || v > out.back() + 1e-6) out.push_back(v);
  }
  if (out.size() < 2) out.clear();
  return out;
}

EmpiricalFit fit_empirical(const Sample& data, const EmpiricalFitOptions& options) {
  const std::size_t n = data.size, K = data.classes;
  if (n < 2)
    throw DomainError("the empirical fit needs at least 2 rows, found " + std::to_string(n));
  if (K < 2)
    throw DomainError("the empirical fit needs K >= 2 classes, found " + std::to_string(K));
  EmpiricalFit out;
  // The rows, normalised (a float32 model's rows sum to 1 within 1e-7, not exactly).
  auto rows = std::make_shared<std::vector<double>>(data.p);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (std::size_t k = 0; k < K; ++k) sum += (*rows)[i * K + k];
    for (std::size_t k = 0; k < K; ++k) (*rows)[i * K + k] /= sum;
  }
  out.spec.classes = K;
  out.spec.rows = rows;

  out.bandwidths = bandwidth_scores(data, options);
  const double density_optimum =
      std::max_element(out.bandwidths.begin(), out.bandwidths.end(),
                       [](const BandwidthScore& a, const BandwidthScore& b) {
                         return a.loo_log_likelihood < b.loo_log_likelihood;
                       })
          ->bandwidth;
  out.spec.bandwidth = 0.0;  // the bootstrap when even the smallest h moves the confidences
  for (const BandwidthScore& b : out.bandwidths)
    if (b.bandwidth <= density_optimum &&
        std::abs(b.confidence_shift) <= options.max_confidence_shift)
      out.spec.bandwidth = std::max(out.spec.bandwidth, b.bandwidth);

  const CurveData curve = curve_data(data);
  const std::vector<double> knots = quantile_knots(curve.t, options.knots);
  const std::vector<std::size_t> every = all_rows(n);
  out.identity_log_likelihood = log_likelihood(LogitSpline{}, curve, every);
  out.penalty = inf;
  out.log_likelihood = out.identity_log_likelihood;
  if (knots.empty()) return out;  // t takes one value: nothing to fit a curve on

  // Folds from a keyed shuffle of the rows (Fisher-Yates).
  std::vector<std::size_t> order = every;
  Engine engine = make_engine({options.seed, 0, 0, Purpose::split});
  for (std::size_t i = n; i > 1; --i) {
    const auto j =
        std::min(i - 1, static_cast<std::size_t>(uniform_open01(engine) * static_cast<double>(i)));
    std::swap(order[i - 1], order[j]);
  }
  const std::size_t F = std::min(options.folds, n);
  std::vector<std::vector<std::size_t>> train(F), test(F);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t f = 0; f < F; ++f) (r % F == f ? test : train)[f].push_back(order[r]);
  const Eigen::MatrixXd B = basis_matrix(curve.t, knots);
  // Each penalty's held-out log-likelihood, fold by fold; infinity (the identity) first, so that
  // a tie keeps it. Scores are computed once per penalty, in the order the rule asks for them.
  out.penalties.push_back({inf, 0.0, std::vector<double>(F, 0.0)});
  for (std::size_t f = 0; f < F; ++f)
    out.penalties.back().folds[f] = log_likelihood(LogitSpline{}, curve, test[f]);
  out.penalties.back().cv_log_likelihood = out.identity_log_likelihood;
  const auto score = [&](double penalty) -> const PenaltyScore& {
    for (const PenaltyScore& p : out.penalties)
      if (p.penalty == penalty) return p;
    PenaltyScore p{penalty, 0.0, std::vector<double>(F)};
    for (std::size_t f = 0; f < F; ++f) {
      p.folds[f] = log_likelihood(fit_on(curve, knots, penalty, B, train[f]), curve, test[f]);
      p.cv_log_likelihood += p.folds[f];
    }
    out.penalties.push_back(std::move(p));
    return out.penalties.back();
  };
  const auto best_of = [&](std::vector<double> grid, bool with_identity) {
    std::sort(grid.begin(), grid.end(), std::greater<>());
    PenaltyScore best = with_identity ? out.penalties.front() : score(grid.front());
    for (double penalty : grid)
      if (const PenaltyScore& p = score(penalty); p.cv_log_likelihood > best.cv_log_likelihood)
        best = p;
    return best;
  };
  // Step 1 (EmpiricalFitOptions::penalties): the identity against the grid.
  PenaltyScore best = best_of(options.penalties, true);
  out.penalty_reason = std::isfinite(best.penalty) ? "the best held-out likelihood"
                                                   : "no penalty predicts the held-out labels "
                                                     "better than the identity";
  // Step 2: a curve that bends further replaces a finite choice when its held-out log-likelihood
  // is higher by more than one standard error of the sum of the folds' differences (sqrt(F)
  // times their standard deviation).
  if (std::isfinite(best.penalty) && options.sharper_penalty > 0.0 &&
      options.sharper_penalty != best.penalty && F > 1) {
    const PenaltyScore base = best;
    const PenaltyScore sharper = score(options.sharper_penalty);
    double mean = 0.0, square = 0.0;
    for (std::size_t f = 0; f < F; ++f) mean += sharper.folds[f] - base.folds[f];
    mean /= static_cast<double>(F);
    for (std::size_t f = 0; f < F; ++f)
      square += std::pow(sharper.folds[f] - base.folds[f] - mean, 2);
    const double gain = static_cast<double>(F) * mean;
    const double se = std::sqrt(square / static_cast<double>(F - 1) * static_cast<double>(F));
    if (gain > se) {
      best = sharper;
      out.penalty_reason = "better than " + format_double(base.penalty) + " by " +
                           format_fixed(gain, 2) + " > one SE " + format_fixed(se, 2);
    }
  }
  // Step 3: a miscalibration the penalty of step 1 cannot resolve (few rows) may still be fitted
  // with more shrinkage: the likelihood's choice among the identity and the wider grid.
  if (!std::isfinite(best.penalty) && !options.fallback_penalties.empty()) {
    best = best_of(options.fallback_penalties, true);
    if (std::isfinite(best.penalty))
      out.penalty_reason =
          "the identity beat the first grid; the best held-out likelihood of "
          "the fallback grid";
  }
  out.penalty = best.penalty;
  std::sort(out.penalties.begin(), out.penalties.end(),
            [](const PenaltyScore& a, const PenaltyScore& b) { return a.penalty > b.penalty; });
  if (std::isfinite(out.penalty)) {
    out.spec.calibration = fit_on(curve, knots, out.penalty, B, every);
    correct_noise(out, curve, knots, B, options);
    out.log_likelihood = log_likelihood(out.spec.calibration, curve, every);
  }
  if (K >= 3 && options.classwise.enabled) {
    std::vector<double> logs(n * K);
    std::vector<std::size_t> top(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::span<double> row(logs.data() + i * K, K);
      row_logs(data, i, row);
      top_label_logit(row, top[i]);
    }
    const ClasswiseData classwise{.classes = K,
                                  .t = curve.t,
                                  .log_p = logs,
                                  .top = top,
                                  .label = data.label,
                                  .curve = &out.spec.calibration,
                                  .train = &train,
                                  .test = &test};
    out.classwise = fit_classwise(classwise, options.classwise);
    out.spec.classwise = out.classwise.map;
  }
  return out;
}

}  // namespace calbench
