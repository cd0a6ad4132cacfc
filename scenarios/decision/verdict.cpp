#include "scenarios/decision/verdict.hpp"

#include <algorithm>
#include <cmath>

#include "core/format.hpp"
#include "report/value_format.hpp"

namespace calbench {
namespace {

std::string short_key(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

std::string group_text(const FrontierRow& row) {
  std::string out;
  for (const auto& s : row.group)
    out += (out.empty() ? "" : ", ") + short_key(s.key) + " " + to_text(s.value);
  return out.empty() ? std::string("all cells") : out;
}

}  // namespace

std::string requirement_verdict(const VerdictFacts& f) {
  const Requirement& req = f.requirement;
  std::string out = "Verdict: the requirement " + metric_name(req) +
                    (req.bound == Bound::at_least ? " >= " : " <= ") + format_double(req.value) +
                    (req.regret ? " (a regret bound)" : "") + " for task " + f.task + " " +
                    to_text(f.params) + " ";
  std::vector<std::string> parts;
  std::optional<double> calibrated;
  bool calibrated_bound = false;  // the calibrated model met it everywhere: a* <= the value
  double worst_shift = 0.0;
  for (const FrontierRow& row : f.rows) {
    std::string part = group_text(row) + ": ";
    if (row.status == FrontierStatus::reached) {
      part += "accuracy " + format_fixed(*row.minimal_accuracy, 3) + " (cells " +
              std::to_string(row.lower->cell) + "-" + std::to_string(row.upper->cell) + ")";
      if (row.calibrated) calibrated = row.minimal_accuracy;
    } else if (row.status == FrontierStatus::met_everywhere) {
      part += "met at every swept accuracy (from " + format_fixed(*row.minimal_accuracy, 3) + ")";
      if (row.calibrated) {
        calibrated = row.minimal_accuracy;
        calibrated_bound = true;
      }
    } else {
      part += "unreachable (best " + metric_name(req) + " " +
              format_fixed(row.lower ? row.lower->value : NAN, 4) + " at accuracy " +
              format_fixed(row.lower ? row.lower->accuracy : NAN, 3) + ")";
    }
    parts.push_back(part);
  }
  if (!f.accuracy_swept)
    out += "is checked cell by cell (no accuracy key is swept): ";
  else
    out += "needs, by level of miscalibration, at least: ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  out += ".";
  std::size_t reached = 0, unreachable = 0;
  for (const FrontierRow& row : f.rows) {
    if (row.status == FrontierStatus::unreachable) ++unreachable;
    if (row.status == FrontierStatus::reached) {
      ++reached;
      if (calibrated) worst_shift = std::max(worst_shift, *row.minimal_accuracy - *calibrated);
    }
  }
  if (calibrated && reached > 0)
    out += " Against the calibrated model, miscalibration raises the accuracy needed by " +
           std::string(calibrated_bound ? "at least " : "up to ") + format_fixed(worst_shift, 3) +
           (calibrated_bound ? " (the calibrated model meets it at every swept accuracy)" : "") +
           ".";
  if (unreachable > 0)
    out.append(1, ' ')
        .append(std::to_string(unreachable))
        .append(" of ")
        .append(std::to_string(f.rows.size()))
        .append(" miscalibration levels cannot meet it at any swept accuracy.");
  const auto& cells = f.cells;
  std::size_t worst = 0;
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (cells[c].miscalibration_cost > cells[worst].miscalibration_cost) worst = c;
  double sd = 0.0;
  for (const auto& c : cells) sd += c.realised_sd;
  sd /= static_cast<double>(cells.size());
  out += " The cost of miscalibration is at most " +
         format_fixed(cells[worst].miscalibration_cost, 4) + " utility per decision (cell " +
         std::to_string(cells[worst].index) + "); a test set of " + std::to_string(f.sample_size) +
         " cases measures the utility with a spread (sd) of about " + format_fixed(sd, 4) +
         ", so differences much below " + format_fixed(2.0 * sd, 4) +
         " will not be visible on such data.";
  // After the recalibrator: the largest remaining cost over the cells with a fit.
  std::optional<std::size_t> worst_recal;
  std::size_t failed = 0;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const auto& r = cells[c].recalibrated;
    if (!r) continue;
    failed += r->failed_fits;
    if (r->fits > 0 && (!worst_recal || r->cost_mean > cells[*worst_recal].recalibrated->cost_mean))
      worst_recal = c;
  }
  if (worst_recal) {
    const VerdictCell::Recalibrated& r = *cells[*worst_recal].recalibrated;
    out += " After recalibration by " + r.label + " fitted on " + std::to_string(r.fit_size) +
           " cases, the cost is at most " + format_fixed(r.cost_mean, 4) + " (sd " +
           format_fixed(r.cost_sd, 4) + " over fits; cell " +
           std::to_string(cells[*worst_recal].index) + ")" +
           (failed > 0 ? "; " + std::to_string(failed) + " fits failed" : std::string()) + ".";
  }
  return out;
}

}  // namespace calbench
