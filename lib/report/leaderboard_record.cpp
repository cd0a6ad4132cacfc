#include "report/leaderboard_record.hpp"

#include <cmath>

namespace calbench {
namespace {

// A number NaN where it is undefined (tau-b with no pair; a method failed in every case): an
// empty field.
Value defined(double x) {
  return std::isnan(x) ? Value() : Value(x);
}

template <typename Row>
std::vector<ColumnSpec<Row>> scope_columns(const std::vector<std::string>& key_names) {
  std::vector<ColumnSpec<Row>> out;
  for (std::size_t i = 0; i < key_names.size(); ++i)
    out.push_back({key_names[i], [i](const Row& r) { return r.key[i]; }});
  append<Row>(out, std::vector<ColumnSpec<Row>>{
                       {"scope", [](const Row& r) { return Value(r.scope); }},
                       {"cases", [](const Row& r) { return count_value(r.lb.boards.cases); }},
                       {"blocks", [](const Row& r) { return count_value(r.lb.boards.clusters); }}});
  return out;
}

template <Estimate Standing::*estimate, double Estimate::*part>
Value standing(const StandingRow& r) {
  return r.standing().*estimate.*part;
}
const std::vector<ColumnSpec<StandingRow>> standing_columns = {
    {"kind",
     [](const auto& r) { return Value(r.lb.estimate[r.board.key] ? "estimate" : "truth"); }},
    {"key", [](const auto& r) { return Value(r.lb.table.keys[r.board.key].name); }},
    {"target", [](const auto& r) { return field_value(r.lb.target[r.board.key]); }},
    {"better",
     [](const auto& r) {
       return Value(std::string(to_string(r.lb.table.keys[r.board.key].better)));
     }},
    {"method", [](const auto& r) { return Value(r.lb.table.methods[r.m]); }},
    {"mean", [](const auto& r) { return defined(r.standing().mean); }},
    {"win_rate", standing<&Standing::win_rate, &Estimate::value>},
    {"win_rate_lower", standing<&Standing::win_rate, &Estimate::lower>},
    {"win_rate_upper", standing<&Standing::win_rate, &Estimate::upper>},
    {"elo", standing<&Standing::elo, &Estimate::value>},
    {"elo_lower", standing<&Standing::elo, &Estimate::lower>},
    {"elo_upper", standing<&Standing::elo, &Estimate::upper>},
    {"rank", [](const auto& r) { return count_value(r.standing().rank); }},
    {"failed", [](const auto& r) { return count_value(r.standing().failed); }}};

template <Estimate RankAgreement::*estimate, double Estimate::*part>
Value agreement(const AgreementRow& r) {
  return defined(r.a.*estimate.*part);
}
template <double Estimate::*part>
Value winners(const AgreementRow& r) {
  return r.a.winner_agreement.*part;
}
const std::vector<ColumnSpec<AgreementRow>> agreement_columns = {
    {"estimator", [](const auto& r) { return Value(r.lb.table.keys[r.a.key].name); }},
    {"target", [](const auto& r) { return field_value(r.lb.target[r.a.key]); }},
    {"truth", [](const auto& r) { return Value(r.lb.table.keys[r.a.reference].name); }},
    {"tau_b", agreement<&RankAgreement::tau_b, &Estimate::value>},
    {"tau_b_lower", agreement<&RankAgreement::tau_b, &Estimate::lower>},
    {"tau_b_upper", agreement<&RankAgreement::tau_b, &Estimate::upper>},
    {"case_tau_b", agreement<&RankAgreement::case_tau_b, &Estimate::value>},
    {"case_tau_b_lower", agreement<&RankAgreement::case_tau_b, &Estimate::lower>},
    {"case_tau_b_upper", agreement<&RankAgreement::case_tau_b, &Estimate::upper>},
    {"tau_cases", [](const auto& r) { return count_value(r.a.tau_cases); }},
    {"winner_agreement", winners<&Estimate::value>},
    {"winner_agreement_lower", winners<&Estimate::lower>},
    {"winner_agreement_upper", winners<&Estimate::upper>}};

// A difference of two agreements; undefined in every resample: an empty field.
template <Estimate RankContrast::*estimate, double Estimate::*part>
Value contrast(const ContrastRow& r) {
  return defined(r.x.*estimate.*part);
}
const std::vector<ColumnSpec<ContrastRow>> contrast_columns = {
    {"estimator", [](const auto& r) { return Value(r.lb.table.keys[r.x.key].name); }},
    {"other", [](const auto& r) { return Value(r.lb.table.keys[r.x.other].name); }},
    {"truth", [](const auto& r) { return Value(r.lb.table.keys[r.x.reference].name); }},
    {"tau_b_difference", contrast<&RankContrast::tau_b, &Estimate::value>},
    {"tau_b_difference_lower", contrast<&RankContrast::tau_b, &Estimate::lower>},
    {"tau_b_difference_upper", contrast<&RankContrast::tau_b, &Estimate::upper>},
    {"case_tau_b_difference", contrast<&RankContrast::case_tau_b, &Estimate::value>},
    {"case_tau_b_difference_lower", contrast<&RankContrast::case_tau_b, &Estimate::lower>},
    {"case_tau_b_difference_upper", contrast<&RankContrast::case_tau_b, &Estimate::upper>},
    {"winner_agreement_difference", contrast<&RankContrast::winner_agreement, &Estimate::value>},
    {"winner_agreement_difference_lower",
     contrast<&RankContrast::winner_agreement, &Estimate::lower>},
    {"winner_agreement_difference_upper",
     contrast<&RankContrast::winner_agreement, &Estimate::upper>}};

}  // namespace

LeaderboardTables::LeaderboardTables(const std::vector<std::string>& key_names)
    : standings_(scope_columns<StandingRow>(key_names)),
      agreements_(scope_columns<AgreementRow>(key_names)),
      contrasts_(scope_columns<ContrastRow>(key_names)) {
  append<StandingRow>(standings_, standing_columns);
  append<AgreementRow>(agreements_, agreement_columns);
  append<ContrastRow>(contrasts_, contrast_columns);
}

std::vector<Table> LeaderboardTables::tables() const {
  return {TableView(standings_).table("leaderboard", show::csv),
          TableView(agreements_).table("leaderboard_agreement", show::csv),
          TableView(contrasts_).table("leaderboard_contrast", show::csv)};
}

void LeaderboardTables::rows(const LeaderboardScope& scope, std::vector<TableRow>& out) const {
  for (const Board& board : scope.lb.boards.boards)
    for (std::size_t m = 0; m < board.standings.size(); ++m)
      out.push_back(TableView(standings_).row("leaderboard", {scope, board, m}, show::csv));
  for (const RankAgreement& a : scope.lb.boards.agreements)
    out.push_back(TableView(agreements_).row("leaderboard_agreement", {scope, a}, show::csv));
  for (const RankContrast& x : scope.lb.boards.contrasts)
    out.push_back(TableView(contrasts_).row("leaderboard_contrast", {scope, x}, show::csv));
}

}  // namespace calbench
