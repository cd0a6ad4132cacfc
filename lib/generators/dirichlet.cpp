#include "generators/dirichlet.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/fast_math.hpp"
#include "core/format.hpp"
#include "core/stop_request.hpp"
#include "generators/categorical.hpp"

namespace calbench {

void DirichletScratch::reserve(std::size_t classes) {
  c.resize(classes);
  log_c.resize(classes);
  tmp.resize(classes);
}

DirichletGenerator::DirichletGenerator(DirichletSpec spec) : spec_(std::move(spec)) {
  if (spec_.classes < 2)
    throw DomainError("classes = " + std::to_string(spec_.classes) + ": must be >= 2");
  if (spec_.alpha.size() == 1) spec_.alpha.assign(spec_.classes, spec_.alpha.front());
  if (spec_.alpha.size() != spec_.classes)
    throw DomainError("alpha has " + std::to_string(spec_.alpha.size()) +
                      " entries: must be one number or one per class (" +
                      std::to_string(spec_.classes) + ")");
  for (std::size_t k = 0; k < spec_.classes; ++k) {
    const double a = spec_.alpha[k];
    if (!(std::isfinite(a) && a > 0.0))
      throw DomainError("alpha[" + std::to_string(k) + "] = " + format_double(a) +
                        ": must be a finite number > 0");
  }
  validate(spec_.map, spec_.classes);
  symmetric_ = std::all_of(spec_.alpha.begin(), spec_.alpha.end(),
                           [&](double a) { return a == spec_.alpha.front(); });
  if (symmetric_) {
    samplers_.emplace_back(spec_.alpha.front());
  } else {
    for (double a : spec_.alpha) samplers_.emplace_back(a);
  }
}

std::string DirichletGenerator::canonical_text() const {
  std::string out = "dirichlet:K=" + std::to_string(spec_.classes) + ":alpha=[";
  for (std::size_t k = 0; k < spec_.classes; ++k) {
    if (k > 0) out.append(1, ',');
    out.append(format_double(spec_.alpha[k]));
  }
  return out + "]:" + calbench::canonical_text(spec_.map);
}

namespace {

// Every gamma is tiny (alpha << 1 and few classes): w_k = exp(log G_k - max log G), which
// keeps the proportions where the variates themselves underflowed; returns their sum.
double weights_from_logs(std::span<const double> log_g, double max_log, std::span<double> w) {
  double total = 0.0;
  for (std::size_t k = 0; k < log_g.size(); ++k) {
    w[k] = std::exp(log_g[k] - max_log);
    total += w[k];
  }
  return total;
}

}  // namespace

void DirichletGenerator::draw_gammas(Engine& engine, EngineLanes* lanes, std::span<double> g,
                                     std::span<double> log_g) const {
  const std::size_t K = spec_.classes;
  // Variates first, logarithms after in one loop; log_g holds the exact logs of tiny variates
  // until then.
  bool any_tiny = false;
  if (symmetric_) {
    any_tiny = samplers_.front().draw_values(engine, lanes, g.first(K), log_g.first(K));
  } else {
    for (std::size_t k = 0; k < K; ++k) {
      g[k] = samplers_[k].draw_value(engine, log_g[k]);
      any_tiny |= !(g[k] > GammaSampler::kTiny);
    }
  }
  if (any_tiny) {
    for (std::size_t k = 0; k < K; ++k)
      if (g[k] > GammaSampler::kTiny) log_g[k] = fast::log(g[k]);
  } else {
    // The usual case: one vectorised pass (core/fast_math.hpp), the same bits as fast::log.
    fast::log_bulk(g.data(), log_g.data(), K);
  }
}

double DirichletGenerator::draw_truth_shifted(Engine& engine, std::span<double> c,
                                              std::span<double> log_c_shifted,
                                              EngineLanes* lanes) const {
  const std::size_t K = spec_.classes;
  draw_gammas(engine, lanes, c, log_c_shifted);
  double sum = 0.0;
  double max_log = -INFINITY;
  for (std::size_t k = 0; k < K; ++k) {
    sum += c[k];
    max_log = std::max(max_log, log_c_shifted[k]);
  }
  if (max_log > -460.0) {  // the largest gamma exceeds 1e-200: normalise directly
    const double inv = 1.0 / sum;
    for (std::size_t k = 0; k < K; ++k) c[k] *= inv;
    return std::log(sum);
  }
  const double s = weights_from_logs(log_c_shifted, max_log, c);
  const double inv = 1.0 / s;
  for (std::size_t k = 0; k < K; ++k) c[k] *= inv;
  return max_log + std::log(s);
}

void DirichletGenerator::draw_truth(Engine& engine, std::span<double> c, std::span<double> log_c,
                                    EngineLanes* lanes) const {
  const double shift = draw_truth_shifted(engine, c, log_c, lanes);
  for (double& v : log_c) v -= shift;
}

std::uint32_t DirichletGenerator::draw_label(Engine& engine, std::span<const double> c) const {
  return draw_categorical(engine, c);
}

void DirichletGenerator::sample_binary_temperature(Engine& engine, EngineLanes& lanes, double inv_t,
                                                   Sample& out, bool keep_truth,
                                                   std::vector<double>& tmp) const {
  // K = 2 needs one logarithm and one exponential per vector, not two of each: with
  // r = log(G1/G0), p_1 = logistic(r / T), and the label is drawn from the unnormalised
  // weights (G0, G1).
  //
  // In passes over the whole sample so that the arithmetic vectorises (the logarithms and
  // exponentials in the bulk functions of core/fast_math.hpp, 1-2 ns each instead of 3-4):
  // all gamma pairs, then the n ratios and their logarithms, the n exponentials, the labels
  // in order, and p with its argmax and confidence (which summarise() would otherwise find in
  // another pass). The engine's draws are consumed in that fixed order, so the sample is a
  // function of the stream alone. Storage: the rows of out.p hold (G0, G1) until the last
  // pass, out.confidence holds G1/G0 and then r, tmp the exponentials.
  const std::size_t n = out.size;
  double* g = out.p.data();
  double* r = out.confidence.data();
  tmp.resize(2 * n);  // first log G of tiny variates (two per row), then the exponentials
  bool any_tiny = false;
  if (symmetric_) {
    any_tiny = samplers_.front().draw_values(engine, &lanes, {g, 2 * n}, tmp);
  } else {
    for (std::size_t i = 0; i < 2 * n; ++i) {
      g[i] = samplers_[i % 2].draw_value(engine, tmp[i]);
      any_tiny |= !(g[i] > GammaSampler::kTiny);
    }
  }
  for (std::size_t i = 0; i < n; ++i) r[i] = g[2 * i + 1] / g[2 * i];
  if (any_tiny) {
    // Tiny alpha: where a variate may have underflowed, r comes from the logarithms; the row
    // is marked by G0 = 0 and keeps r in G1 until the label pass.
    for (std::size_t i = 0; i < n; ++i) {
      const double g0 = g[2 * i], g1 = g[2 * i + 1];
      if (g0 > GammaSampler::kTiny && g1 > GammaSampler::kTiny) continue;
      const double l0 = g0 > GammaSampler::kTiny ? fast::log(g0) : tmp[2 * i];
      const double l1 = g1 > GammaSampler::kTiny ? fast::log(g1) : tmp[2 * i + 1];
      g[2 * i] = 0.0;
      g[2 * i + 1] = l1 - l0;
      r[i] = 1.0;
    }
  }
  tmp.resize(n);
  fast::log_bulk(r, r, n);
  if (any_tiny)
    for (std::size_t i = 0; i < n; ++i)
      if (g[2 * i] == 0.0) r[i] = g[2 * i + 1];
  for (std::size_t i = 0; i < n; ++i) tmp[i] = -std::abs(r[i]) * inv_t;
  fast::exp_bulk(tmp.data(), tmp.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 65536 == 0) throw_if_stop_requested();  // Ctrl-C within a second (stop_request.hpp)
    double w0 = g[2 * i], w1 = g[2 * i + 1];
    if (w0 == 0.0) {  // a tiny row: weights from r, the larger one 1
      const double e = fast::exp(-std::abs(r[i]));
      w0 = r[i] >= 0.0 ? e : 1.0;
      w1 = r[i] >= 0.0 ? 1.0 : e;
    }
    const double total = w0 + w1;
    // draw_categorical_weights(engine, {w0, w1}, total) without its branch, which the label
    // would mispredict half the time (W3 18 % slower): 0 when u total < w0, else 1 unless w1
    // has no mass.
    const double u = uniform_open01(engine) * total;
    out.label[i] = static_cast<std::uint32_t>(!(u < w0) & (w1 != 0.0));
    if (keep_truth) {
      out.truth[2 * i] = w0 / total;
      out.truth[2 * i + 1] = w1 / total;
    }
  }
  // The larger of the two is 1/(1 + e), the other e/(1 + e), e = exp(-|r|/T): the same
  // arithmetic as the softmax of apply(). The argmax is the lower index on ties, as in
  // summarise().
  for (std::size_t i = 0; i < n; ++i) {
    const double e = tmp[i];
    const double inv = 1.0 / (1.0 + e);
    const bool up = r[i] >= 0.0;
    const double p0 = up ? e * inv : inv;
    const double p1 = up ? inv : e * inv;
    g[2 * i] = p0;
    g[2 * i + 1] = p1;
    out.predicted[i] = static_cast<std::uint32_t>(p1 > p0);
    r[i] = inv;  // the confidence: e <= 1, so e / (1 + e) <= 1 / (1 + e)
  }
}

void DirichletGenerator::sample_temperature(Engine& engine, EngineLanes& lanes, double inv_t,
                                            Sample& out, bool keep_truth,
                                            DirichletScratch& scratch) const {
  // The generic loop of sample() makes ten passes over each row besides the draws: normalise
  // c, sum it again for the label, scale log c, find its maximum, subtract it, sum, normalise
  // p, and summarise()'s argmax. Here: with G the gamma variates and L = log G (the shifted
  // log c of draw_truth_shifted),
  // - the label is drawn from G with the total sum G (draw_categorical's arithmetic on
  //   unnormalised weights: the same distribution, one pass fewer), and c = G / sum G is
  //   formed only when the truth is kept;
  // - p = softmax(L / T) exactly as apply() computes it (z = L / T, max z = (max L) / T
  //   because scaling by 1/T > 0 keeps the order, exp(z - max z) summed and normalised), so
  //   p has the same bits as in the generic loop;
  // - the argmax and confidence are found in the normalising pass, as summarise() would.
  const std::size_t K = spec_.classes;
  const std::span<double> g(scratch.c), log_g(scratch.log_c);
  for (std::size_t i = 0; i < out.size; ++i) {
    if (i % 4096 == 0) throw_if_stop_requested();  // Ctrl-C within a second (stop_request.hpp)
    draw_gammas(engine, &lanes, g, log_g);
    double total = fast::sum(g.data(), K);
    double max_log = fast::max(log_g.data(), K);
    if (!(max_log > -460.0)) total = weights_from_logs(log_g, max_log, g);
    out.label[i] = draw_categorical_weights(engine, g, total);
    if (keep_truth) {
      const double inv = 1.0 / total;
      double* c = out.truth.data() + i * K;
      for (std::size_t k = 0; k < K; ++k) c[k] = g[k] * inv;
    }
    double* p = out.p.data() + i * K;
    const double z_max = max_log * inv_t;
    for (std::size_t k = 0; k < K; ++k) p[k] = log_g[k] * inv_t - z_max;
    fast::exp_bulk(p, p, K);
    const double inv = 1.0 / fast::sum(p, K);  // softmax_from_logits' sum
    for (std::size_t k = 0; k < K; ++k) p[k] *= inv;
    // The largest p is the class of max log G: exp(0) / sum = inv, and every other term is
    // exp(z - max z) <= 1 times inv. So summarise()'s argmax, the first largest p, is the
    // first class with p == inv: a scan that exits early, not a chain of dependent
    // comparisons. (The fallback keeps the result right should no p equal inv.)
    std::size_t best = 0;
    while (best < K && p[best] != inv) ++best;
    if (best == K) best = static_cast<std::size_t>(std::max_element(p, p + K) - p);
    out.predicted[i] = static_cast<std::uint32_t>(best);
    out.confidence[i] = p[best];
  }
}

void DirichletGenerator::sample(Engine& engine, std::size_t n, Sample& out,
                                DirichletScratch& scratch, bool keep_truth) const {
  const std::size_t K = spec_.classes;
  out.resize(n, K);
  out.truth.resize(keep_truth ? n * K : 0);
  scratch.reserve(K);
  const std::span<double> c(scratch.c), log_c(scratch.log_c), tmp(scratch.tmp);
  // The sample's bulk random words come from eight lanes seeded by the stream
  // (core/rng.hpp), so the sample is still a function of the stream alone.
  EngineLanes lanes(engine);
  if (K == 2) {
    if (const auto* t = std::get_if<TemperatureMap>(&spec_.map)) {
      sample_binary_temperature(engine, lanes, 1.0 / t->temperature, out, keep_truth, scratch.tmp);
      return;
    }
  }
  if (const auto* t = std::get_if<TemperatureMap>(&spec_.map)) {
    sample_temperature(engine, lanes, 1.0 / t->temperature, out, keep_truth, scratch);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 4096 == 0) throw_if_stop_requested();  // Ctrl-C within a second (stop_request.hpp)
    draw_truth(engine, c, log_c, &lanes);
    out.label[i] = draw_label(engine, c);
    if (keep_truth)
      std::copy(c.begin(), c.end(), out.truth.begin() + static_cast<std::ptrdiff_t>(i * K));
    apply(spec_.map, c, log_c, out.row(i), {}, tmp);
  }
  out.summarise();
}

}  // namespace calbench
