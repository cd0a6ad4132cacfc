#pragma once
// How the domain's result types are written to and read from the run journal
// (core/byte_archive.hpp): one `serialize` per type, listing its members once. The scenarios'
// own task results list theirs beside them, in their run.cpp.
#include "decisions/decision_value.hpp"
#include "estimators/uncertainty.hpp"
#include "recalibrators/recalibrator.hpp"
#include "truth/composed_truth.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

template <typename Archive>
void serialize(Archive& a, Interval& x) {
  a(x.lo, x.hi);
}

template <typename Archive>
void serialize(Archive& a, TruthValue& x) {
  a(x.value, x.method, x.error);
}

template <typename Archive>
void serialize(Archive& a, FittedValue& x) {
  a(x.name, x.value);
}

template <typename Archive>
void serialize(Archive& a, ComposedTruth& x) {
  a(x.values);
}

template <typename Archive>
void serialize(Archive& a, RecalibratedValue& x) {
  a(x.policy, x.cost);
}

template <typename Archive>
void serialize(Archive& a, DecisionValue& x) {
  a(x.policy, x.oracle, x.cost, x.figures, x.oracle_figures, x.samples);
}

}  // namespace calbench
