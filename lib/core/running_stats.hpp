#pragma once
// Mean and variance in one pass (Welford 1962), mergeable (Chan et al. 1979) so that batches
// computed in parallel combine in a fixed order to the same bits every time.
#include <cmath>
#include <cstddef>

namespace calbench {

class RunningStats {
 public:
  void add(double x) {
    ++n_;
    const double delta = x - mean_;
    mean_ += delta / static_cast<double>(n_);
    m2_ += delta * (x - mean_);
  }
  void merge(const RunningStats& other) {
    if (other.n_ == 0) return;
    if (n_ == 0) {
      *this = other;
      return;
    }
    const double n = static_cast<double>(n_ + other.n_);
    const double delta = other.mean_ - mean_;
    mean_ += delta * static_cast<double>(other.n_) / n;
    m2_ += other.m2_ + delta * delta * static_cast<double>(n_) * static_cast<double>(other.n_) / n;
    n_ += other.n_;
  }
  std::size_t count() const { return n_; }
  double mean() const { return mean_; }
  // Sample variance (divisor n - 1); 0 for fewer than two values.
  double variance() const { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }
  double sd() const { return std::sqrt(variance()); }
  double standard_error() const { return n_ > 0 ? sd() / std::sqrt(static_cast<double>(n_)) : 0.0; }

 private:
  std::size_t n_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
};

}  // namespace calbench
