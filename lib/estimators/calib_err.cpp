#include "estimators/calib_err.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace calbench {

CalibErr::CalibErr(CalibErrSpec spec) : spec_(spec) {
  if (spec_.beta < 1) throw DomainError("beta = 0: must be >= 1");
  if (spec_.norm != Norm::l1 && spec_.norm != Norm::l2 && spec_.norm != Norm::max)
    throw DomainError("calib_err norm: must be l1, l2 or max");
}

std::optional<Quantity> CalibErr::target() const {
  if (spec_.norm == Norm::l1) return Quantity::ece_top_l1;
  if (spec_.norm == Norm::l2) return Quantity::ece_top_l2;
  return std::nullopt;
}

std::string CalibErr::why() const {
  return "its bins of " + std::to_string(spec_.beta) + " rows leave none to evaluate below " +
         std::to_string(minimum_rows()) + " rows, where the library returns 0";
}

double CalibErr::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  const std::size_t n = s.size, beta = spec_.beta;
  const std::size_t evaluated = n / beta;  // bins of beta rows; the last, extended, is skipped
  if (evaluated < 2) return 0.0;
  stable_score_order(s.confidence, ws, ws.bin_of);
  const double nd = static_cast<double>(n), w = static_cast<double>(beta) / nd;
  double out = 0.0;
  for (std::size_t b = 0; b + 1 < evaluated; ++b) {
    double score = 0.0, hits = 0.0;
    for (std::size_t r = b * beta; r < (b + 1) * beta; ++r) {
      const std::uint32_t i = ws.bin_of[r];
      score += s.confidence[i];
      hits += s.outcome(i, s.predicted[i]);
    }
    // |mean confidence - mean correctness|, the two means apart as the library takes them.
    const double bd = static_cast<double>(beta);
    const double gap = std::abs(score / bd - hits / bd);
    if (spec_.norm == Norm::max)
      out = std::max(out, gap);
    else
      out += w * (spec_.norm == Norm::l2 ? gap * gap : gap);
  }
  return spec_.norm == Norm::l2 ? std::sqrt(out) : out;
}

}  // namespace calbench
