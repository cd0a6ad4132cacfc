#include "core/quantity.hpp"

namespace calbench {
namespace {
constexpr std::array<std::string_view, 9> names = {
    "accuracy",     "ece_top_l1", "ece_top_l2", "classwise_ece_l1", "canonical_l1",
    "canonical_l2", "brier",      "nll",        "overconfidence"};
}

std::string_view to_string(Quantity q) {
  return names[static_cast<std::size_t>(q)];
}

std::optional<Quantity> quantity_from_string(std::string_view name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Quantity>(i);
  return std::nullopt;
}
const std::vector<QuantityEntry>& quantity_registry() {
  // Definitions of DESIGN.md §1; Z = max_k p_k, c the true class distribution, r(p) = E[c | p].
  static const std::vector<QuantityEntry> rows = {
      {Quantity::accuracy, "P(y = argmax p) = E[c_{argmax p}]"},
      {Quantity::ece_top_l1, "E_Z |P(y = argmax p | Z) - Z|, Z = max p"},
      {Quantity::ece_top_l2, "sqrt(E_Z (P(y = argmax p | Z) - Z)^2)"},
      {Quantity::classwise_ece_l1, "(1/K) sum_k E |P(y = k | p_k) - p_k|"},
      {Quantity::canonical_l1, "E ||r(p) - p||_1"},
      {Quantity::canonical_l2, "sqrt(E ||r(p) - p||_2^2)"},
      {Quantity::brier, "E sum_k (p_k - 1{y=k})^2 = E[sum p_k^2 - 2 sum p_k c_k + 1]"},
      {Quantity::nll, "E[-log p_y] = E[-sum c_k log p_k]"},
      {Quantity::overconfidence, "E[Z] - accuracy"},
  };
  return rows;
}

double least_value(Quantity q) {
  return q == Quantity::overconfidence ? -1.0 : 0.0;
}

}  // namespace calbench
