#pragma once
// Where a default interval was measured to cover less than nominal - 0.05 (docs/intervals.md,
// "Where the defaults miss"): the table `calbench eval` reads to print a note beside an
// interval, by estimator, class-count region and sample-size region.
//
// A region's figure is the lowest coverage of the estimator's default method over every
// setting of docs/intervals.md's coverage tables inside the region (the parametric Dirichlet
// fakes of configs/interval_coverage*.json and the empirical fakes of scikit-learn models of
// configs/interval_coverage_realistic.json), all at nominal 0.90. Only regions whose figure
// is below 0.85 are rows; a region with no row was measured to cover, or was not measured.
// tests/unit/test_doc_figures.cpp derives the rows from the doc's tables and checks this table
// against them.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "estimators/interval_methods.hpp"

namespace calbench {

// K = 2; 3 <= K <= 10; K > 10.
enum class ClassRegion { two, three_to_ten, over_ten };
// n < 500; 500 <= n < 5,000; n >= 5,000.
enum class SizeRegion { below_500, below_5000, from_5000 };

ClassRegion class_region(std::size_t classes);
SizeRegion size_region(std::size_t n);
std::string_view to_string(ClassRegion region);  // "2", "3-10", ">10" (the doc's cells)
std::string_view to_string(SizeRegion region);   // "<500", "500-4999", ">=5000"

inline constexpr double measured_level = 0.90;  // the coverage tables' nominal level

struct CoverageMiss {
  std::string_view label;  // the estimator's label at its default parameters (ece_ew15)
  IntervalMethod method;   // its default method, the one measured
  ClassRegion classes;
  SizeRegion size;
  double coverage;           // the lowest measured in the region, two decimals as printed
  std::string_view setting;  // where: "digits_lr_k10 fake, K = 10, n = 1000"
};

// Every row, in the doc's order.
std::span<const CoverageMiss> coverage_misses();

// The same for eval's default `fake` interval (EstimatorTraits::eval_fake), measured on real
// models instead (docs/intervals.md, "The done-when table": tests/golden/fake_interval_study/
// done_when): a region's figure is the coverage over all replicates of its cells, pooled (7
// replicates a cell are too few for a lowest cell to mean anything), a row where it is below
// 0.85. tests/unit/test_doc_figures.cpp derives the rows from the run's cells.csv.
std::span<const CoverageMiss> real_model_misses();

// The row of either table for this estimator label, method and data shape, if one was measured
// to miss.
std::optional<CoverageMiss> coverage_miss(std::string_view label, IntervalMethod method,
                                          std::size_t classes, std::size_t n);

// The note eval prints: "coverage 0.53 at nominal 0.90 measured for K 3-10, n 500-4999
// (digits_lr_k10 fake, K = 10, n = 1000; docs/intervals.md)".
std::string coverage_note(const CoverageMiss& miss);

}  // namespace calbench
