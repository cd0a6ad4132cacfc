#pragma once
// The `empirical` family (docs/generators.md, docs/fit.md): a fake classifier made from a real
// model's outputs, with the model's confidence distribution and a fitted calibration function.
//
// Confidences: a smoothed bootstrap of the model's rows. Draw a row i uniformly, add Gaussian
// noise of standard deviation h to each of its log-probabilities, softmax:
//   p = softmax(log p_i + h eps), eps ~ N(0, I_K).
// (Softmax ignores a common shift, so this is isotropic noise of variance h^2 in the
// centred-log-ratio coordinates of the simplex.) h = 0 is the plain bootstrap of the rows.
//
// Calibration: c = r(p) from the top-label logit t = log(z / (1 - z)), z = max p, and the
// curve s(t) = t + f(t) (generators/logit_spline.hpp), g = sigmoid(s):
//   K >= 3: c_top = g(z), c_k = p_k (1 - g(z)) / (1 - z) for the others (kyle's top-label
//           construction with a flexible g), so P(y = argmax p | p) = g(z) depends on z only;
//   K = 2:  t = logit p_1 and c_1 = g(p_1), c_0 = 1 - c_1 (class-asymmetric miscalibration).
// f = 0 gives c = p exactly. c is a function of p, so r(p) = c. y ~ Categorical(c).
// K >= 3 may add the classwise map (generators/classwise_map.hpp, issue #35): per-class
// deviations of the top-label curve and splines that move the non-top classes' shares, so that
// the fake's classwise calibration is fitted too, not only implied by the top label.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "generators/classwise_map.hpp"
#include "generators/logit_spline.hpp"

namespace calbench {

struct EmpiricalSpec {
  std::size_t classes = 2;
  // The model's confidence vectors, n x K row-major, each row on the simplex (sums within 1e-6
  // of 1). Shared: a spec is copied into every cell and every generator.
  std::shared_ptr<const std::vector<double>> rows;
  double bandwidth = 0.0;  // h >= 0, in log-probability units
  LogitSpline calibration;
  ClasswiseMap classwise;  // K >= 3 only; absent: the top-label construction alone
  // Where the rows came from in a config: the file as written (empty: inline) and its SHA-256.
  std::string rows_file, rows_sha256;
};

// h is at most this: beyond, the noise swamps any model's logits (docs/config.md).
inline constexpr double empirical_bandwidth_max = 10.0;
// A log-probability is kept at most this far below its row's largest (exact zeros of a model
// become e^-700 ~ 1e-304 of the top class, which every metric treats as 0).
inline constexpr double empirical_log_span = 700.0;

class EmpiricalGenerator {
 public:
  // Validates every parameter (rows finite, >= 0, summing to 1 within 1e-6, at least one;
  // 0 <= h <= 10; the curve); throws DomainError naming the row or parameter.
  explicit EmpiricalGenerator(EmpiricalSpec spec);

  const EmpiricalSpec& spec() const { return spec_; }
  std::size_t classes() const { return spec_.classes; }
  std::size_t rows() const { return log_rows_.size() / spec_.classes; }
  // Includes the SHA-256 of the rows' values, so the truth cache tells data sets apart.
  std::string canonical_text() const;

  // p (and log p) from row i smoothed by the noise.
  void draw_confidence(Engine& engine, std::size_t row, std::span<double> p,
                       std::span<double> log_p) const;
  // c = r(p) from p and log p (p = exp(log p), as draw_confidence gives them).
  void calibrate(std::span<const double> p, std::span<const double> log_p,
                 std::span<double> c) const;
  // The curve's probability g at top-label (K = 2: class-1) logit t.
  double curve(double t) const;

  // One draw: a row, p, c = r(p); returns y ~ c.
  std::uint32_t draw(Engine& engine, std::span<double> c, std::span<double> p,
                     std::span<double> log_p) const;

 private:
  EmpiricalSpec spec_;
  std::vector<double> log_rows_;  // log p_i, clamped to empirical_log_span below the row's top
  ClasswisePieces classwise_;     // spec_.classwise as piecewise cubics
  std::string digest_;            // SHA-256 of the rows' doubles
};

// The logit of the top class, t = log p_top - log(sum of the others), from log p (exact
// where 1 - z underflows); K = 2 uses class 1 instead of the top class. Sets `top`.
double top_label_logit(std::span<const double> log_p, std::size_t& top);

}  // namespace calbench
