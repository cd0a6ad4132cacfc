#include "fit/held_out_split.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"

namespace calbench {
namespace {

Sample rows_of(const Sample& data, const std::vector<std::size_t>& rows) {
  const std::size_t K = data.classes;
  std::vector<double> p(rows.size() * K);
  std::vector<std::uint32_t> labels(rows.size());
  for (std::size_t j = 0; j < rows.size(); ++j) {
    std::copy_n(data.p.begin() + static_cast<std::ptrdiff_t>(rows[j] * K), K,
                p.begin() + static_cast<std::ptrdiff_t>(j * K));
    labels[j] = data.label[rows[j]];
  }
  return make_sample(K, std::move(p), std::move(labels));
}

// The row indices in the seeded shuffled order.
std::vector<std::size_t> shuffled_rows(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  Engine engine = make_engine({seed, 0, 0, Purpose::split});
  for (std::size_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(uniform_open01(engine) * static_cast<double>(i + 1));
    std::swap(order[i], order[std::min(j, i)]);
  }
  return order;
}

// Shuffled positions [begin, end) held out, the others fitted on, each in the data's order.
HeldOutSplit split_at(const Sample& data, const std::vector<std::size_t>& order, std::size_t begin,
                      std::size_t end) {
  const auto b = order.begin();
  std::vector<std::size_t> judge(b + static_cast<std::ptrdiff_t>(begin),
                                 b + static_cast<std::ptrdiff_t>(end));
  std::vector<std::size_t> fit(b, b + static_cast<std::ptrdiff_t>(begin));
  fit.insert(fit.end(), b + static_cast<std::ptrdiff_t>(end), order.end());
  std::sort(judge.begin(), judge.end());
  std::sort(fit.begin(), fit.end());
  return {rows_of(data, fit), rows_of(data, judge)};
}

}  // namespace

HeldOutSplit split_rows(const Sample& data, double fraction, std::uint64_t seed) {
  if (!(fraction > 0.0 && fraction < 1.0))
    throw DomainError("held-out fraction " + format_double(fraction) + ": must be > 0 and < 1");
  const std::size_t n = data.size;
  const auto held = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(n)));
  if (held < 2 || n - held < 2)
    throw DomainError("holding out " + format_double(fraction) + " of " + std::to_string(n) +
                      " rows leaves " + std::to_string(n - held) + " to fit and " +
                      std::to_string(held) + " to judge: each needs at least 2");
  return split_at(data, shuffled_rows(n, seed), 0, held);
}

std::vector<HeldOutSplit> fold_rows(const Sample& data, std::size_t folds, std::uint64_t seed) {
  const std::size_t n = data.size;
  if (folds < 2 || n < 2 * folds)
    throw DomainError(std::to_string(folds) + " folds of " + std::to_string(n) +
                      " rows: need at least 2 folds and 2 rows per fold (n >= " +
                      std::to_string(2 * std::max<std::size_t>(folds, 2)) + ")");
  const std::vector<std::size_t> order = shuffled_rows(n, seed);
  std::vector<HeldOutSplit> out;
  for (std::size_t f = 0; f < folds; ++f)
    out.push_back(split_at(data, order, f * n / folds, (f + 1) * n / folds));
  return out;
}

}  // namespace calbench
