#include "generators/empirical.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/sha256.hpp"
#include "generators/categorical.hpp"
#include "generators/ziggurat.hpp"

namespace calbench {
namespace {

// log(1 + e^x) without overflow.
double softplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
}

double log_sum_exp(std::span<const double> x, std::size_t skip) {
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < x.size(); ++k)
    if (k != skip) m = std::max(m, x[k]);
  if (!std::isfinite(m)) return m;
  double s = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k)
    if (k != skip) s += std::exp(x[k] - m);
  return m + std::log(s);
}

}  // namespace

double top_label_logit(std::span<const double> log_p, std::size_t& top) {
  const std::size_t K = log_p.size();
  if (K == 2) {
    top = 1;
    return log_p[1] - log_p[0];
  }
  top = 0;
  for (std::size_t k = 1; k < K; ++k)
    if (log_p[k] > log_p[top]) top = k;
  return log_p[top] - log_sum_exp(log_p, top);
}

EmpiricalGenerator::EmpiricalGenerator(EmpiricalSpec spec) : spec_(std::move(spec)) {
  const std::size_t K = spec_.classes;
  if (K < 2) throw DomainError("classes = " + std::to_string(K) + ": must be >= 2");
  if (!spec_.rows || spec_.rows->empty())
    throw DomainError("rows: expected at least one confidence vector");
  const std::vector<double>& rows = *spec_.rows;
  if (rows.size() % K != 0)
    throw DomainError("rows: " + std::to_string(rows.size()) +
                      " values are not whole rows of K = " + std::to_string(K));
  if (!(spec_.bandwidth >= 0.0 && spec_.bandwidth <= empirical_bandwidth_max))
    throw DomainError("bandwidth = " + format_double(spec_.bandwidth) +
                      ": must be >= 0 and <= " + format_double(empirical_bandwidth_max));
  validate(spec_.calibration);
  validate(spec_.classwise, K);
  classwise_ = ClasswisePieces(spec_.classwise);
  const std::size_t n = rows.size() / K;
  log_rows_.resize(rows.size());
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0, top = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const double v = rows[i * K + k];
      if (!(std::isfinite(v) && v >= 0.0))
        throw DomainError("rows[" + std::to_string(i) + "][" + std::to_string(k) +
                          "] = " + format_double(v) + ": must be a probability >= 0");
      sum += v;
      top = std::max(top, v);
    }
    if (std::abs(sum - 1.0) > 1e-6)
      throw DomainError("rows[" + std::to_string(i) + "] sums to " + format_double(sum) +
                        ": must sum to 1 (within 1e-6)");
    const double floor = std::log(top / sum) - empirical_log_span;
    for (std::size_t k = 0; k < K; ++k)
      log_rows_[i * K + k] = std::max(std::log(rows[i * K + k] / sum), floor);
  }
  digest_ = sha256_hex(
      {reinterpret_cast<const unsigned char*>(rows.data()), rows.size() * sizeof(double)});
}

std::string EmpiricalGenerator::canonical_text() const {
  std::string out = "empirical:K=" + std::to_string(spec_.classes) +
                    ":n=" + std::to_string(rows()) + ":rows=" + digest_ +
                    ":h=" + format_double(spec_.bandwidth) + ":" +
                    calbench::canonical_text(spec_.calibration);
  // Appended, not ":" + ...: GCC 12 warns (-Wrestrict) on that form.
  if (!is_identity(spec_.classwise))
    out.append(":").append(calbench::canonical_text(spec_.classwise));
  return out;
}

void EmpiricalGenerator::draw_confidence(Engine& engine, std::size_t row, std::span<double> p,
                                         std::span<double> log_p) const {
  const std::size_t K = spec_.classes;
  const double* l = log_rows_.data() + row * K;
  const double h = spec_.bandwidth;
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < K; ++k) {
    log_p[k] = h > 0.0 ? l[k] + h * standard_normal(engine) : l[k];
    m = std::max(m, log_p[k]);
  }
  double s = 0.0;
  if (!classwise_.identity()) {
    // With the classwise map (issue #35; no earlier result to keep bit for bit): one
    // exponential per class, p_k = e^(l_k - m) / s.
    for (std::size_t k = 0; k < K; ++k) s += p[k] = std::exp(log_p[k] - m);
    const double log_s = std::log(s);
    for (std::size_t k = 0; k < K; ++k) {
      log_p[k] = (log_p[k] - m) - log_s;
      p[k] /= s;
    }
    return;
  }
  for (std::size_t k = 0; k < K; ++k) s += std::exp(log_p[k] - m);
  const double lse = m + std::log(s);
  for (std::size_t k = 0; k < K; ++k) {
    log_p[k] -= lse;
    p[k] = std::exp(log_p[k]);
  }
}

double EmpiricalGenerator::curve(double t) const {
  const double s = calibrated_logit(spec_.calibration, t);
  return 1.0 / (1.0 + std::exp(-s));
}

void EmpiricalGenerator::calibrate(std::span<const double> p, std::span<const double> log_p,
                                   std::span<double> c) const {
  const std::size_t K = spec_.classes;
  const ClasswiseMap& classwise = spec_.classwise;
  if (is_identity(spec_.calibration) && is_identity(classwise)) {
    std::copy(p.begin(), p.end(), c.begin());
    return;
  }
  std::size_t top = 0;
  if (!classwise_.identity()) {
    // t = log z - log(1 - z) with 1 - z summed from the other classes' p (no exponentials);
    // where that sum underflows, from their log p as top_label_logit does.
    for (std::size_t k = 1; k < K; ++k)
      if (log_p[k] > log_p[top]) top = k;
    double rest = 0.0;
    for (std::size_t k = 0; k < K; ++k)
      if (k != top) rest += p[k];
    const double t = rest > 1e-300 ? log_p[top] - std::log(rest) : top_label_logit(log_p, top);
    const double s = calibrated_logit(spec_.calibration, t) + classwise_.top_deviation(top, t);
    classwise_.fill_other_classes(p, log_p, top, 1.0 / (1.0 + std::exp(-s)), -softplus(s), c);
    return;
  }
  const double t = top_label_logit(log_p, top);
  const double s = calibrated_logit(spec_.calibration, t);
  // g = sigmoid(s); the others scale by (1 - g)/(1 - z) = sigmoid(-s)/sigmoid(-t), in logs:
  // softplus(t) - softplus(s).
  const double g = 1.0 / (1.0 + std::exp(-s));
  const double log_ratio = softplus(t) - softplus(s);
  for (std::size_t k = 0; k < K; ++k) c[k] = k == top ? g : std::exp(log_p[k] + log_ratio);
}

std::uint32_t EmpiricalGenerator::draw(Engine& engine, std::span<double> c, std::span<double> p,
                                       std::span<double> log_p) const {
  const std::size_t n = rows();
  const auto row =
      std::min(n - 1, static_cast<std::size_t>(uniform_open01(engine) * static_cast<double>(n)));
  draw_confidence(engine, row, p, log_p);
  calibrate(p, log_p, c);
  return draw_categorical(engine, c);
}

}  // namespace calbench
