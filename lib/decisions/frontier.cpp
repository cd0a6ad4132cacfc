#include "decisions/frontier.hpp"

#include <algorithm>

namespace calbench {

std::vector<FrontierRow> requirement_frontier(const std::vector<FrontierCell>& cells,
                                              const Requirement& requirement) {
  std::vector<FrontierRow> rows;
  std::vector<std::vector<const FrontierCell*>> members;
  for (const auto& cell : cells) {
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const FrontierRow& r) { return r.group == cell.group; });
    if (it == rows.end()) {
      rows.push_back({});
      rows.back().group = cell.group;
      rows.back().calibrated = true;
      members.emplace_back();
      it = rows.end() - 1;
    }
    const auto g = static_cast<std::size_t>(it - rows.begin());
    it->cells.push_back(cell.cell);
    it->calibrated = it->calibrated && cell.calibrated;
    members[g].push_back(&cell);
  }
  for (std::size_t g = 0; g < rows.size(); ++g) {
    FrontierRow& row = rows[g];
    std::vector<FrontierPoint> points;
    for (const FrontierCell* c : members[g]) points.push_back({c->cell, c->accuracy, c->value});
    const auto ece_of = [&](std::size_t cell) {
      for (const FrontierCell* c : members[g])
        if (c->cell == cell) return c->ece_top_l1;
      return 0.0;
    };
    const Frontier f = minimal_accuracy(points, requirement);
    row.status = f.status;
    row.minimal_accuracy = f.minimal_accuracy;
    row.monotone = f.monotone;
    if (f.below && f.above) {
      row.lower = f.below;
      row.upper = f.above;
      const double span = f.above->accuracy - f.below->accuracy;
      const double frac = span > 0.0 ? (*f.minimal_accuracy - f.below->accuracy) / span : 0.0;
      const double e_lo = ece_of(f.below->cell), e_hi = ece_of(f.above->cell);
      row.ece_top_l1 = e_lo + (e_hi - e_lo) * frac;
    } else if (f.closest) {
      row.lower = f.closest;
    } else if (f.status == FrontierStatus::met_everywhere) {
      const auto lowest = std::min_element(
          points.begin(), points.end(), [](const FrontierPoint& a, const FrontierPoint& b) {
            return a.accuracy != b.accuracy ? a.accuracy < b.accuracy : a.cell < b.cell;
          });
      row.upper = *lowest;
      row.ece_top_l1 = ece_of(lowest->cell);
    }
  }
  return rows;
}

}  // namespace calbench
