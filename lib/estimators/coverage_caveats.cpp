#include "estimators/coverage_caveats.hpp"

#include <array>

#include "core/format.hpp"

namespace calbench {
namespace {

using enum ClassRegion;
using enum SizeRegion;
using M = IntervalMethod;

// docs/intervals.md, "Where the defaults miss" (printed by scripts/intervals_table.py
// --caveats from the three coverage runs; tests/test_coverage_caveats.cpp checks the two agree).
constexpr std::array misses{
    // ROWS
    CoverageMiss{"placeholder", M::basic, two, below_500, 0.0, "x"},
};

}  // namespace

ClassRegion class_region(std::size_t classes) {
  if (classes <= 2) return two;
  return classes <= 10 ? three_to_ten : over_ten;
}

SizeRegion size_region(std::size_t n) {
  if (n < 500) return below_500;
  return n < 5000 ? below_5000 : from_5000;
}

std::string_view to_string(ClassRegion region) {
  switch (region) {
    case two:
      return "2";
    case three_to_ten:
      return "3-10";
    case over_ten:
      return ">10";
  }
  return "";
}

std::string_view to_string(SizeRegion region) {
  switch (region) {
    case below_500:
      return "<500";
    case below_5000:
      return "500-4999";
    case from_5000:
      return ">=5000";
  }
  return "";
}

std::span<const CoverageMiss> coverage_misses() {
  return misses;
}

std::optional<CoverageMiss> coverage_miss(std::string_view label, IntervalMethod method,
                                          std::size_t classes, std::size_t n) {
  const ClassRegion k = class_region(classes);
  const SizeRegion s = size_region(n);
  for (const CoverageMiss& m : misses)
    if (m.label == label && m.method == method && m.classes == k && m.size == s) return m;
  return std::nullopt;
}

std::string coverage_note(const CoverageMiss& miss) {
  return "coverage " + format_fixed(miss.coverage, 2) + " at nominal " +
         format_fixed(measured_level, 2) + " measured for K " +
         std::string(to_string(miss.classes)) + ", n " + std::string(to_string(miss.size)) + " (" +
         std::string(miss.setting) + "; docs/intervals.md)";
}

}  // namespace calbench
