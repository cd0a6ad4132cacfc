#pragma once
// One point of a reliability curve: the mean score over a range of scores and the observed (or
// true) frequency of the outcome there. Shared by the true curves (truth/reliability_curve.hpp)
// and the binned curves of a sample (estimators/binned_reliability.hpp).
#include <cstdint>

namespace calbench {

struct CurvePoint {
  double lower = 0.0, upper = 0.0;  // the range of scores the point stands for
  double score = 0.0;               // mean score
  double frequency = 0.0;           // the curve's value at `score`
  double error = 0.0;               // its error (each producer states which)
  std::uint64_t count = 0;          // rows (or draws) in the point
  double weight = 0.0;              // count / all rows: the mass of the point
};

}  // namespace calbench
