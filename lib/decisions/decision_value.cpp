#include "decisions/decision_value.hpp"

#include <algorithm>
#include <array>
#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <functional>
#include <memory>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "truth/map_preimage.hpp"
#include "truth/monte_carlo_sampler.hpp"

namespace calbench {
namespace {

using boost::math::quadrature::exp_sinh;
using boost::math::quadrature::gauss_kronrod;

// log sigma(t) = -log(1 + e^-t), without overflow or cancellation for either sign of t.
double log_sigmoid(double t) {
  return t >= 0.0 ? -std::log1p(std::exp(-t)) : t - std::log1p(std::exp(t));
}

// p = h(c), bit for bit c when h is the identity whatever its type (temperature 1, gamma 1),
// so that the policy and the oracle then decide alike and the cost is exactly 0.
void report(const MiscalibrationMap& map, std::span<const double> c, std::span<const double> log_c,
            std::span<double> p, std::span<double> log_p, std::span<double> scratch) {
  if (is_identity(map)) {
    std::copy(c.begin(), c.end(), p.begin());
    std::copy(log_c.begin(), log_c.end(), log_p.begin());
  } else {
    apply(map, c, log_c, p, log_p, scratch);
  }
}

// ---- K = 2: quadrature over t = log(c_1 / c_0) -------------------------------------------

// Relative tolerance of each piece; the absolute error of a value is the sum of the pieces'
// error estimates (reported), in practice below 1e-12.
constexpr double quad_tolerance = 1e-12;
constexpr std::size_t max_tallies = 8;

struct BinaryPoint {
  double c[2], log_c[2], p[2], log_p[2];
  double density;
};

class BinaryIntegrand {
 public:
  BinaryIntegrand(const DirichletGenerator& generator, const DecisionTask& task)
      : map_(generator.spec().map), task_(task) {
    a0_ = generator.spec().alpha[0];
    a1_ = generator.spec().alpha[1];
    log_beta_ = std::lgamma(a0_) + std::lgamma(a1_) - std::lgamma(a0_ + a1_);
  }

  BinaryPoint at(double t) const {
    BinaryPoint pt{};
    pt.log_c[1] = log_sigmoid(t);
    pt.log_c[0] = log_sigmoid(-t);
    pt.c[1] = std::exp(pt.log_c[1]);
    pt.c[0] = std::exp(pt.log_c[0]);
    pt.density = std::exp(a1_ * pt.log_c[1] + a0_ * pt.log_c[0] - log_beta_);
    double scratch[2];
    report(map_, pt.c, pt.log_c, pt.p, pt.log_p, scratch);
    return pt;
  }
  Decision policy(const BinaryPoint& pt) const { return task_.decide(pt.p, pt.log_p); }
  Decision oracle(const BinaryPoint& pt) const { return task_.decide(pt.c, pt.log_c); }

 private:
  const MiscalibrationMap& map_;
  const DecisionTask& task_;
  double a0_, a1_, log_beta_;
};

// The points where the decision's action changes, located on a grid t = sinh(u) and refined by
// bisection.
std::vector<double> change_points(const std::function<std::size_t(double)>& action) {
  constexpr int grid = 40000;
  const double u_max = std::asinh(5000.0);
  std::vector<double> out;
  double t_prev = -5000.0;
  std::size_t a_prev = action(t_prev);
  for (int i = 1; i <= grid; ++i) {
    const double u = -u_max + 2.0 * u_max * static_cast<double>(i) / grid;
    const double t = i == grid / 2 ? 0.0 : std::sinh(u);
    const std::size_t a = action(t);
    if (a != a_prev) {
      double lo = t_prev, hi = t;
      for (int it = 0; it < 200; ++it) {
        const double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi)) break;
        (action(mid) == a_prev ? lo : hi) = mid;
      }
      out.push_back(hi);
    }
    t_prev = t;
    a_prev = a;
  }
  return out;
}

// The integral of f over the real line split at `cuts` (sorted): Gauss-Kronrod between cuts,
// exp-sinh on the tails. `error` receives the sum of the pieces' error estimates.
double integrate_split(const std::function<double(double)>& f, const std::vector<double>& cuts,
                       double& error) {
  error = 0.0;
  double sum = 0.0;
  exp_sinh<double> tails;
  double err = 0.0, l1 = 0.0;
  sum += tails.integrate(f, -INFINITY, cuts.front(), quad_tolerance, &err, &l1);
  error += err;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    if (!(cuts[i + 1] > cuts[i])) continue;
    err = 0.0;
    // Depth 10 at most: where the integrand is tiny (a stake near 0) its rounding noise is
    // above the relative tolerance, and deeper bisection would only chase that noise.
    sum += gauss_kronrod<double, 61>::integrate(f, cuts[i], cuts[i + 1], 10, quad_tolerance, &err);
    error += err;
  }
  err = 0.0;
  sum += tails.integrate(f, cuts.back(), INFINITY, quad_tolerance, &err, &l1);
  error += err;
  return sum;
}

TruthValue quadrature_value(double value, double error) {
  return TruthValue{value, TruthMethod::quadrature, error};
}

// ---- Monte Carlo ----------------------------------------------------------------------------

constexpr std::size_t mc_batches = 64;

struct BatchStats {
  RunningStats policy, oracle, cost;
  std::vector<RunningStats> tallies, oracle_tallies;
  void merge(const BatchStats& other) {
    policy.merge(other.policy);
    oracle.merge(other.oracle);
    cost.merge(other.cost);
    for (std::size_t i = 0; i < tallies.size(); ++i) {
      tallies[i].merge(other.tallies[i]);
      oracle_tallies[i].merge(other.oracle_tallies[i]);
    }
  }
};

std::vector<double> figures_from(const DecisionTask& task, const std::vector<double>& means) {
  std::vector<double> out(task.figure_names().size());
  task.figures(means, out);
  return out;
}

// One Monte Carlo case: the true c, the reported p, and r(p) = E[c | p] (with logarithms).
struct Draw {
  std::vector<double> c, log_c, p, log_p, r, log_r, tmp;
  // tmp: the map's scratch (K), then the posterior's (3K, map_preimage.hpp).
  explicit Draw(std::size_t K) : c(K), log_c(K), p(K), log_p(K), r(K), log_r(K), tmp(3 * K) {}
};

// E over draws of the policy's and the oracle's utilities and tallies, weighted by r(p); the
// streams are keyed by `canonical` (the generator's text) and the batch.
template <typename DrawCase>
DecisionValue monte_carlo_core(const std::string& canonical, std::size_t K,
                               const DecisionTask& task, std::uint64_t samples,
                               DrawCase&& draw_case) {
  if (task.classes() != K)
    throw DomainError("the task is for " + std::to_string(task.classes()) +
                      " classes, the generator has " + std::to_string(K));
  const std::size_t T = task.tally_count();
  const std::uint64_t per_batch =
      std::max<std::uint64_t>(1, (samples + mc_batches - 1) / mc_batches);
  const mc::KeyedBatches streams{hash64(canonical), Purpose::decision, mc_batches};

  std::vector<BatchStats> batches =
      mc::draw_batches<BatchStats>(streams, [&](std::size_t, Engine& engine) {
        BatchStats s;
        s.tallies.resize(T);
        s.oracle_tallies.resize(T);
        Draw d(K);
        GeneratorScratch scratch;
        scratch.reserve(K);
        std::vector<double> v(T);
        for (std::uint64_t i = 0; i < per_batch; ++i) {
          draw_case(engine, d, scratch);
          const Decision dp = task.decide(d.p, d.log_p);
          const Decision dor = task.decide(d.r, d.log_r);
          const double up = expected_utility(task, dp, d.r);
          const double uo = dp == dor ? up : expected_utility(task, dor, d.r);
          s.policy.add(up);
          s.oracle.add(uo);
          s.cost.add(uo - up);
          if (T > 0) {
            task.tally(dp, d.r, v);
            for (std::size_t j = 0; j < T; ++j) s.tallies[j].add(v[j]);
            task.tally(dor, d.r, v);
            for (std::size_t j = 0; j < T; ++j) s.oracle_tallies[j].add(v[j]);
          }
        }
        return s;
      });
  BatchStats total = std::move(batches.front());
  for (std::size_t b = 1; b < mc_batches; ++b) total.merge(batches[b]);

  DecisionValue out;
  const auto mc = [](const RunningStats& s) {
    return TruthValue{s.mean(), TruthMethod::monte_carlo, s.standard_error()};
  };
  out.policy = mc(total.policy);
  out.oracle = mc(total.oracle);
  out.cost = mc(total.cost);
  std::vector<double> means(T), oracle_means(T);
  for (std::size_t j = 0; j < T; ++j) {
    means[j] = total.tallies[j].mean();
    oracle_means[j] = total.oracle_tallies[j].mean();
  }
  out.figures = figures_from(task, means);
  out.oracle_figures = figures_from(task, oracle_means);
  out.samples = per_batch * mc_batches;
  return out;
}

// The cases of a dirichlet generator: c, p = h(c), and the weights r(p) = E[c | p] — for an
// injective map c itself; otherwise the posterior mean, which has the same expectation against
// any function of p and less variance.
auto dirichlet_cases(const DirichletGenerator& generator) {
  auto preimages = std::make_shared<const MapPreimages>(generator.spec());
  if (preimages->fibres() == MapPreimages::Fibres::continuum)
    throw DomainError("no posterior mean r(p) for the map " + map_name(generator.spec().map) +
                      ": each p has a continuum of preimages");
  return [&generator, preimages](Engine& engine, Draw& d, GeneratorScratch&) {
    generator.draw_truth(engine, d.c, d.log_c);
    report(generator.spec().map, d.c, d.log_c, d.p, d.log_p, d.tmp);
    if (preimages->injective()) {
      std::copy(d.c.begin(), d.c.end(), d.r.begin());
      std::copy(d.log_c.begin(), d.log_c.end(), d.log_r.begin());
    } else {
      posterior_mean(*preimages, d.c, d.log_p, d.r, d.tmp);
      for (std::size_t k = 0; k < d.r.size(); ++k) d.log_r[k] = std::log(d.r[k]);
    }
  };
}

// Every other family draws c as a function of p (class_conditional: c = r(p); label_noise:
// (1 - w) p + w beta; beta_binary: the calibration curve at p), so r(p) = c.
auto family_cases(const Generator& generator) {
  return [&generator](Engine& engine, Draw& d, GeneratorScratch& scratch) {
    generator.draw(engine, d.c, d.p, d.log_p, scratch);
    std::copy(d.c.begin(), d.c.end(), d.r.begin());
    for (std::size_t k = 0; k < d.c.size(); ++k) d.log_r[k] = std::log(d.c[k]);
  };
}

// Rows per batched apply of a calibration map.
constexpr std::size_t recalibration_chunk = 1024;

// The draws of monte_carlo_core (same key, batches and per-batch streams), each valued by the
// oracle once and by every model's policy.
template <typename DrawCase>
std::vector<RecalibratedValue> recalibrated_core(const std::string& canonical, std::size_t K,
                                                 const DecisionTask& task,
                                                 std::span<const CalibrationModel* const> models,
                                                 std::uint64_t samples, DrawCase&& draw_case) {
  if (task.classes() != K)
    throw DomainError("the task is for " + std::to_string(task.classes()) +
                      " classes, the generator has " + std::to_string(K));
  const std::size_t M = models.size();
  const std::uint64_t per_batch =
      std::max<std::uint64_t>(1, (samples + mc_batches - 1) / mc_batches);
  const mc::KeyedBatches streams{hash64(canonical), Purpose::decision, mc_batches};
  // [batch][model]: policy and cost.
  std::vector<std::vector<RunningStats>> policy(mc_batches, std::vector<RunningStats>(M)),
      cost(mc_batches, std::vector<RunningStats>(M));
  mc::for_each_batch(streams, [&](std::size_t b, Engine& engine) {
    Draw d(K);
    GeneratorScratch scratch;
    scratch.reserve(K);
    const std::size_t chunk = recalibration_chunk;
    std::vector<double> p(chunk * K), log_p(chunk * K), r(chunk * K), q(chunk * K), oracle(chunk);
    std::vector<Decision> oracle_decision(chunk);
    for (std::uint64_t done = 0; done < per_batch;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, per_batch - done));
      for (std::size_t i = 0; i < n; ++i) {
        draw_case(engine, d, scratch);
        std::copy(d.p.begin(), d.p.end(), p.begin() + static_cast<std::ptrdiff_t>(i * K));
        std::copy(d.log_p.begin(), d.log_p.end(),
                  log_p.begin() + static_cast<std::ptrdiff_t>(i * K));
        std::copy(d.r.begin(), d.r.end(), r.begin() + static_cast<std::ptrdiff_t>(i * K));
        oracle_decision[i] = task.decide(d.r, d.log_r);
        oracle[i] = expected_utility(task, oracle_decision[i], d.r);
      }
      for (std::size_t m = 0; m < M; ++m) {
        // nullptr: the uncalibrated model, deciding on p and log p as monte_carlo_core's policy.
        const bool uncalibrated = models[m] == nullptr;
        if (!uncalibrated)
          models[m]->apply(std::span<const double>(p.data(), n * K), K,
                           std::span<double>(q.data(), n * K));
        const std::vector<double>& belief = uncalibrated ? p : q;
        for (std::size_t i = 0; i < n; ++i) {
          const std::span<const double> qi(belief.data() + i * K, K), ri(r.data() + i * K, K);
          const Decision dq =
              uncalibrated ? task.decide(qi, std::span<const double>(log_p.data() + i * K, K))
                           : task.decide(qi, {});
          const double u = dq == oracle_decision[i] ? oracle[i] : expected_utility(task, dq, ri);
          policy[b][m].add(u);
          cost[b][m].add(oracle[i] - u);
        }
      }
      done += n;
    }
  });
  std::vector<RecalibratedValue> out(M);
  for (std::size_t m = 0; m < M; ++m) {
    RunningStats pol = policy[0][m], cst = cost[0][m];
    for (std::size_t b = 1; b < mc_batches; ++b) {
      pol.merge(policy[b][m]);
      cst.merge(cost[b][m]);
    }
    out[m].policy = TruthValue{pol.mean(), TruthMethod::monte_carlo, pol.standard_error()};
    out[m].cost = TruthValue{cst.mean(), TruthMethod::monte_carlo, cst.standard_error()};
  }
  return out;
}

}  // namespace

bool decision_quadrature_applies(const DirichletGenerator& generator) {
  return generator.classes() == 2 && is_injective(generator.spec().map, 2);
}

DecisionValue quadrature_decision_value(const DirichletGenerator& generator,
                                        const DecisionTask& task) {
  if (!decision_quadrature_applies(generator))
    throw DomainError("decision quadrature needs K = 2 and an injective map");
  if (task.classes() != 2)
    throw DomainError("the task is for " + std::to_string(task.classes()) +
                      " classes, the generator has 2");
  const BinaryIntegrand integrand(generator, task);
  std::vector<double> cuts = {0.0};
  for (double t : change_points([&](double s) { return integrand.policy(integrand.at(s)).action; }))
    cuts.push_back(t);
  for (double t : change_points([&](double s) { return integrand.oracle(integrand.at(s)).action; }))
    cuts.push_back(t);
  std::sort(cuts.begin(), cuts.end());
  // Change points closer than 1e-12 (relative) are one: a piece that short holds less than
  // 1e-11 of any integral here, and the adaptive rule cannot converge on a subnormal width.
  cuts.erase(std::unique(cuts.begin(), cuts.end(),
                         [](double a, double b) {
                           return b - a <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)});
                         }),
             cuts.end());

  // f(t) = density(t) g(t), 0 where the density underflows (so that no 0 * inf arises far out).
  const auto weighted = [&](auto&& g) {
    return [&integrand, g](double t) {
      const BinaryPoint pt = integrand.at(t);
      return pt.density == 0.0 ? 0.0 : pt.density * g(pt);
    };
  };
  const auto eu = [&](const BinaryPoint& pt, const Decision& d) {
    return expected_utility(task, d, pt.c);
  };
  DecisionValue out;
  double err = 0.0;
  const double policy = integrate_split(
      weighted([&](const BinaryPoint& pt) { return eu(pt, integrand.policy(pt)); }), cuts, err);
  out.policy = quadrature_value(policy, err);
  const double oracle = integrate_split(
      weighted([&](const BinaryPoint& pt) { return eu(pt, integrand.oracle(pt)); }), cuts, err);
  out.oracle = quadrature_value(oracle, err);
  // The cost integrates the per-case difference: exactly 0 where the decisions agree.
  const double cost = integrate_split(weighted([&](const BinaryPoint& pt) {
                                        const Decision dp = integrand.policy(pt);
                                        const Decision dor = integrand.oracle(pt);
                                        return dp == dor ? 0.0 : eu(pt, dor) - eu(pt, dp);
                                      }),
                                      cuts, err);
  out.cost = quadrature_value(cost, err);
  const std::size_t T = task.tally_count();
  if (T > max_tallies) throw DomainError("a task with more than 8 tallies");
  std::vector<double> means(T), oracle_means(T);
  for (std::size_t i = 0; i < T; ++i) {
    const auto tally_of = [&, i](const BinaryPoint& pt, const Decision& d) {
      std::array<double, max_tallies> v{};
      task.tally(d, pt.c, std::span<double>(v.data(), T));
      return v[i];
    };
    means[i] = integrate_split(
        weighted([&](const BinaryPoint& pt) { return tally_of(pt, integrand.policy(pt)); }), cuts,
        err);
    oracle_means[i] = integrate_split(
        weighted([&](const BinaryPoint& pt) { return tally_of(pt, integrand.oracle(pt)); }), cuts,
        err);
  }
  out.figures = figures_from(task, means);
  out.oracle_figures = figures_from(task, oracle_means);
  return out;
}

DecisionValue monte_carlo_decision_value(const DirichletGenerator& generator,
                                         const DecisionTask& task, std::uint64_t samples) {
  return monte_carlo_core(generator.canonical_text(), generator.classes(), task, samples,
                          dirichlet_cases(generator));
}

DecisionValue exact_decision_value(const DirichletGenerator& generator, const DecisionTask& task,
                                   std::uint64_t samples) {
  if (decision_quadrature_applies(generator)) return quadrature_decision_value(generator, task);
  return monte_carlo_decision_value(generator, task, samples);
}

DecisionValue exact_decision_value(const Generator& generator, const DecisionTask& task,
                                   std::uint64_t samples) {
  if (const DirichletGenerator* d = generator.dirichlet())
    return exact_decision_value(*d, task, samples);
  return monte_carlo_core(generator.canonical_text(), generator.classes(), task, samples,
                          family_cases(generator));
}

std::vector<RecalibratedValue> recalibrated_decision_values(
    const Generator& generator, const DecisionTask& task,
    std::span<const CalibrationModel* const> models, std::uint64_t samples) {
  if (const DirichletGenerator* d = generator.dirichlet())
    return recalibrated_core(generator.canonical_text(), generator.classes(), task, models, samples,
                             dirichlet_cases(*d));
  return recalibrated_core(generator.canonical_text(), generator.classes(), task, models, samples,
                           family_cases(generator));
}

double realised_utility(const DecisionTask& task, const Sample& sample) {
  if (sample.size == 0) throw DomainError("the realised utility of an empty sample");
  double sum = 0.0;
  for (std::size_t i = 0; i < sample.size; ++i)
    sum += task.utility(task.decide(sample.row(i), {}), sample.label[i]);
  return sum / static_cast<double>(sample.size);
}

double realised_utility(const Generator& generator, const DecisionTask& task, std::size_t n,
                        Engine& engine) {
  if (const DirichletGenerator* d = generator.dirichlet())
    return realised_utility(*d, task, n, engine);
  const std::size_t K = generator.classes();
  std::vector<double> c(K), p(K), log_p(K);
  GeneratorScratch scratch;
  scratch.reserve(K);
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t y = generator.draw(engine, c, p, log_p, scratch);
    sum += task.utility(task.decide(p, log_p), y);
  }
  return sum / static_cast<double>(n);
}

double realised_utility(const DirichletGenerator& generator, const DecisionTask& task,
                        std::size_t n, Engine& engine) {
  const std::size_t K = generator.classes();
  std::vector<double> c(K), log_c(K), p(K), log_p(K), tmp(K);
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    generator.draw_truth(engine, c, log_c);
    const std::uint32_t y = generator.draw_label(engine, c);
    report(generator.spec().map, c, log_c, p, log_p, tmp);
    sum += task.utility(task.decide(p, log_p), y);
  }
  return sum / static_cast<double>(n);
}

}  // namespace calbench
