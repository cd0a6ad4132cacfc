#pragma once
// The split of a model's rows into the rows a fake is fitted on and the rows it is judged on
// (`calbench fit`'s verdict, docs/fit.md).
//
// Deterministic by the seed: a Fisher-Yates shuffle of the row indices drawn from the stream
// {seed, 0, 0, Purpose::split}; each part keeps the data's row order. Index j <= i is
// floor(u (i + 1)) for u uniform on (0, 1) (core/rng.hpp), whose bias (below n 2^-53) is far
// below anything measured here.
// - split_rows: the first ceil(fraction * n) shuffled rows are held out (one split);
// - fold_rows: k folds (cross-fitting), fold f holding out the shuffled positions
//   [floor(f n / k), floor((f + 1) n / k)), so every row is held out exactly once and the
//   folds' sizes differ by at most one.
#include <cstdint>
#include <vector>

#include "core/sample.hpp"

namespace calbench {

struct HeldOutSplit {
  Sample fit;       // the rows the fake is fitted on
  Sample held_out;  // the rows it is judged on
};

// Throws DomainError unless 0 < fraction < 1 and both parts get at least 2 rows.
HeldOutSplit split_rows(const Sample& data, double fraction, std::uint64_t seed);

// Throws DomainError unless folds >= 2 and every fold holds out at least 2 rows and fits on at
// least 2 (n >= 2 folds).
std::vector<HeldOutSplit> fold_rows(const Sample& data, std::size_t folds, std::uint64_t seed);

}  // namespace calbench
