#include "generators/class_conditional.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"
#include "generators/categorical.hpp"

namespace calbench {
namespace {

std::string list_text(std::span<const double> v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s.append(1, ',');
    s.append(format_double(v[i]));
  }
  return s + "]";
}

}  // namespace

std::vector<double> class_conditional_alpha(std::size_t classes, double concentration,
                                            double correct_class) {
  std::vector<double> alpha(classes * classes, concentration);
  for (std::size_t k = 0; k < classes; ++k) alpha[k * classes + k] = correct_class;
  return alpha;
}

ClassConditionalGenerator::ClassConditionalGenerator(ClassConditionalSpec spec)
    : spec_(std::move(spec)) {
  const std::size_t K = spec_.classes;
  if (K < 2) throw DomainError("classes = " + std::to_string(K) + ": must be >= 2");
  if (spec_.prior.empty()) spec_.prior.assign(K, 1.0 / static_cast<double>(K));
  if (spec_.prior.size() != K)
    throw DomainError("prior has " + std::to_string(spec_.prior.size()) +
                      " entries: must have one per class (" + std::to_string(K) + ")");
  double total = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    const double v = spec_.prior[k];
    if (!(std::isfinite(v) && v > 0.0))
      throw DomainError("prior[" + std::to_string(k) + "] = " + format_double(v) +
                        ": must be a finite number > 0");
    total += v;
  }
  if (std::abs(total - 1.0) > 1e-9)
    throw DomainError("prior sums to " + format_double(total) + ": must sum to 1 (within 1e-9)");
  if (spec_.alpha.size() != K * K)
    throw DomainError("alpha has " + std::to_string(spec_.alpha.size()) + " entries: must be a " +
                      std::to_string(K) + " x " + std::to_string(K) + " matrix");
  for (std::size_t i = 0; i < K * K; ++i) {
    const double a = spec_.alpha[i];
    if (!(std::isfinite(a) && a > 0.0))
      throw DomainError("alpha[" + std::to_string(i / K) + "][" + std::to_string(i % K) +
                        "] = " + format_double(a) + ": must be a finite number > 0");
  }
  for (std::size_t k = 0; k < K; ++k) {
    const auto row = alpha_row(k);
    rows_.emplace_back(DirichletSpec{K, {row.begin(), row.end()}, IdentityMap{}});
    double a0 = 0.0, log_b = 0.0;
    for (double a : row) {
      a0 += a;
      log_b += std::lgamma(a);
    }
    log_norm_.push_back(log_b - std::lgamma(a0));  // log B(alpha^(k))
    log_prior_.push_back(std::log(spec_.prior[k]));
  }
  // Symmetric: uniform prior, every row a 1 + (b - a) e_k with one a and one b.
  const double a = K > 1 ? spec_.alpha[1] : spec_.alpha[0];
  const double b = spec_.alpha[0];
  symmetric_ = std::all_of(spec_.prior.begin(), spec_.prior.end(),
                           [&](double v) { return v == spec_.prior.front(); });
  for (std::size_t i = 0; i < K * K && symmetric_; ++i)
    symmetric_ = spec_.alpha[i] == (i / K == i % K ? b : a);
  exponent_ = b - a;
  // Sparse form of the posterior's weights: each column's most common value as its base.
  std::vector<double> base(K), column(K);
  for (std::size_t j = 0; j < K; ++j) {
    for (std::size_t k = 0; k < K; ++k) column[k] = spec_.alpha[k * K + j];
    std::sort(column.begin(), column.end());
    std::size_t best = 0;
    for (std::size_t i = 0, run = 0; i < K; ++i) {
      run = i > 0 && column[i] == column[i - 1] ? run + 1 : 1;
      if (run > best) {
        best = run;
        base[j] = column[i];
      }
    }
  }
  row_begin_.push_back(0);
  for (std::size_t k = 0; k < K; ++k) {
    offset_.push_back(log_prior_[k] - log_norm_[k]);
    for (std::size_t j = 0; j < K; ++j)
      if (const double dev = spec_.alpha[k * K + j] - base[j]; dev != 0.0) {
        deviation_column_.push_back(j);
        deviation_.push_back(dev);
      }
    row_begin_.push_back(deviation_.size());
  }
}

std::string ClassConditionalGenerator::canonical_text() const {
  return "class_conditional:K=" + std::to_string(spec_.classes) +
         ":prior=" + list_text(spec_.prior) + ":alpha=" + list_text(spec_.alpha);
}

void ClassConditionalGenerator::posterior(std::span<const double> log_p,
                                          std::span<double> r) const {
  const std::size_t K = spec_.classes;
  // log pi_k + log Dir(p; alpha^(k)) = log pi_k - log B(alpha^(k)) + sum_j (alpha_kj - 1) log p_j;
  // in the symmetric form every term but (b - a) log p_k is common to all k: O(K), not O(K^2);
  // otherwise the terms of each column's base value are common to all k (offset_, above).
  double best = -INFINITY;
  for (std::size_t k = 0; k < K; ++k) {
    double w;
    if (symmetric_) {
      w = exponent_ * log_p[k];
    } else {
      w = offset_[k];
      for (std::size_t i = row_begin_[k]; i < row_begin_[k + 1]; ++i)
        w += deviation_[i] * log_p[deviation_column_[i]];
    }
    r[k] = w;
    best = std::max(best, w);
  }
  double sum = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    r[k] = std::exp(r[k] - best);
    sum += r[k];
  }
  const double inv = 1.0 / sum;
  for (std::size_t k = 0; k < K; ++k) r[k] *= inv;
}

std::uint32_t ClassConditionalGenerator::draw(Engine& engine, std::span<double> c,
                                              std::span<double> p, std::span<double> log_p) const {
  const auto y = draw_categorical(engine, spec_.prior);
  rows_[y].draw_truth(engine, p, log_p);
  posterior(log_p, c);
  return y;
}

}  // namespace calbench
