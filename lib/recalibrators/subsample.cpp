#include "recalibrators/subsample.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace calbench {

Sample first_rows(const Sample& sample, std::size_t rows) {
  const std::size_t n = std::min(rows, sample.size), k = sample.classes;
  Sample out;
  out.resize(n, k);
  std::copy_n(sample.p.begin(), n * k, out.p.begin());
  std::copy_n(sample.label.begin(), n, out.label.begin());
  if (!sample.truth.empty()) out.truth.assign(sample.truth.begin(), sample.truth.begin() + n * k);
  out.summarise();
  return out;
}

Subsample::Subsample(std::shared_ptr<const Recalibrator> inner, std::size_t rows)
    : inner_(std::move(inner)), rows_(rows) {
  if (rows_ < 1) throw DomainError("subsample: rows = 0: must be >= 1");
}

std::unique_ptr<const CalibrationModel> Subsample::fit(const Sample& sample) const {
  if (sample.size <= rows_) return inner_->fit(sample);
  return inner_->fit(first_rows(sample, rows_));
}

}  // namespace calbench
