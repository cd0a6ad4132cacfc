#pragma once
// Leaderboards as result records (docs/recalibration.md, "Leaderboards"): leaderboard.csv,
// leaderboard_agreement.csv and leaderboard_contrast.csv. After a scope's key columns (a
// scenario's: empty for a board over every cell), its scope, cases and bootstrap blocks, then
// per (key, model) its standing, per (estimator, true quantity) their agreement and per
// (estimator, other estimator, true quantity) the difference of their agreements. The report
// layer only lays them out; the boards come from leaderboard/leaderboard.hpp.
#include <optional>
#include <string>
#include <vector>

#include "core/quantity.hpp"
#include "core/value.hpp"
#include "leaderboard/leaderboard.hpp"
#include "report/columns.hpp"
#include "report/reporter.hpp"

namespace calbench {

// The leaderboards of one scope: every model ranked per key — true quantities of the models,
// then estimators on the test sample — over cases, a case being one replicate of a cell (as one
// CalArena experiment is one calibration/test split). A method whose fit failed in a case
// loses it (LeaderboardTable::failed).
struct LeaderboardRecord {
  LeaderboardTable table;                       // methods, cases' blocks, keys' values
  std::vector<bool> estimate;                   // per key: an estimator (else a true quantity)
  std::vector<std::optional<Quantity>> target;  // per key: the estimator's target
  Leaderboards boards;                          // each key; each (estimate, truth) pair
};

// A board's scope: the key columns' fields, its name ("cell", "all", "generator:3"), its boards.
struct LeaderboardScope {
  const std::vector<Value>& key;
  std::string scope;
  const LeaderboardRecord& lb;
};
struct StandingRow : LeaderboardScope {
  const Board& board;
  std::size_t m;
  const Standing& standing() const { return board.standings[m]; }
};
struct AgreementRow : LeaderboardScope {
  const RankAgreement& a;
};
struct ContrastRow : LeaderboardScope {
  const RankContrast& x;
};

// The three tables' columns after `key_names`, declared once.
class LeaderboardTables {
 public:
  explicit LeaderboardTables(const std::vector<std::string>& key_names);
  // leaderboard, leaderboard_agreement and leaderboard_contrast: data tables for the header.
  std::vector<Table> tables() const;
  // A scope's rows of the three tables.
  void rows(const LeaderboardScope& scope, std::vector<TableRow>& out) const;

 private:
  std::vector<ColumnSpec<StandingRow>> standings_;
  std::vector<ColumnSpec<AgreementRow>> agreements_;
  std::vector<ColumnSpec<ContrastRow>> contrasts_;
};

}  // namespace calbench
