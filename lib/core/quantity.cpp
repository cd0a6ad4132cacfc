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
}  // namespace calbench
