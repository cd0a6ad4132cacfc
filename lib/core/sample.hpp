#pragma once
// A finite sample {(p_i, y_i)} as the estimators see it, plus the per-row facts every
// top-label estimator needs (confidence, predicted class, correctness), computed once.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace calbench {

struct Sample {
  std::size_t classes = 0;
  std::size_t size = 0;
  std::vector<double> p;                 // size x classes, row-major
  std::vector<std::uint32_t> label;      // y_i
  std::vector<double> confidence;        // max_k p_ik
  std::vector<std::uint32_t> predicted;  // argmax_k p_ik, the lowest index on ties
  // The true class distributions c_i (size x classes) when the sample comes from a generator
  // asked to keep them, else empty. Only population computations keep them
  // (truth/population.hpp): E[1{y = k} | p] = E[c_k | p], so an estimator that is linear in
  // the outcomes within its groups may use c_k in place of 1{y = k} (Rao-Blackwellisation),
  // with the same population limit and far less noise.
  std::vector<double> truth;

  void resize(std::size_t n, std::size_t k);
  std::span<const double> row(std::size_t i) const { return {p.data() + i * classes, classes}; }
  std::span<double> row(std::size_t i) { return {p.data() + i * classes, classes}; }
  bool correct(std::size_t i) const { return predicted[i] == label[i]; }
  // 1{y_i = k}, or c_ik when the truth is kept (see `truth`).
  double outcome(std::size_t i, std::size_t k) const {
    if (!truth.empty()) return truth[i * classes + k];
    return label[i] == k ? 1.0 : 0.0;
  }

  // Fills confidence and predicted from p.
  void summarise();
};

// Builds a Sample from rows of probabilities and labels (tests, calbench eval).
Sample make_sample(std::size_t classes, std::vector<double> p, std::vector<std::uint32_t> labels);

}  // namespace calbench
