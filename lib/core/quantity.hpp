#pragma once
// The ground-truth quantities of DESIGN.md §1, by their contract names.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace calbench {

enum class Quantity {
  accuracy,
  ece_top_l1,
  ece_top_l2,
  classwise_ece_l1,
  canonical_l1,
  canonical_l2,
  brier,
  nll,
  overconfidence,
};

inline constexpr std::array<Quantity, 9> all_quantities = {
    Quantity::accuracy,      Quantity::ece_top_l1,
    Quantity::ece_top_l2,    Quantity::classwise_ece_l1,
    Quantity::canonical_l1,  Quantity::canonical_l2,
    Quantity::brier,         Quantity::nll,
    Quantity::overconfidence};

std::string_view to_string(Quantity q);

// The least value the quantity can take: 0 for every error, score and accuracy; -1 for
// overconfidence (E[Z] - accuracy). `calbench eval` truncates an interval for the quantity
// there, which cannot lower its coverage: the truth is never below it.
double least_value(Quantity q);
std::optional<Quantity> quantity_from_string(std::string_view name);

// A quantity with its definition (DESIGN.md §1), as `calbench list quantities` shows it.
struct QuantityEntry {
  Quantity quantity;
  std::string definition;
};

const std::vector<QuantityEntry>& quantity_registry();

}  // namespace calbench
