#include "leaderboard/leaderboard.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "leaderboard/bradley_terry.hpp"
#include "leaderboard/kendall_tau.hpp"

namespace calbench {
namespace {

// A value oriented so that smaller is better.
double badness(double value, Better better) {
  return better == Better::lower ? value : -value;
}

void check_table(const LeaderboardTable& table, const LeaderboardSettings& settings) {
  const std::size_t m = table.methods.size(), c = table.cases();
  if (m < 2) throw DomainError("leaderboard: needs at least two methods, got " + std::to_string(m));
  if (c == 0) throw DomainError("leaderboard: no cases");
  if (settings.resamples < 1 || settings.elo_resamples > settings.resamples)
    throw DomainError("leaderboard: resamples must be >= 1 and >= elo_resamples");
  if (!(settings.level > 0.0 && settings.level < 1.0))
    throw DomainError("leaderboard: level must be in (0, 1)");
  if (!table.failed.empty() && table.failed.size() != c * m)
    throw DomainError(
        "leaderboard: " + std::to_string(table.failed.size()) +
        " failure flags, expected none or cases x methods = " + std::to_string(c * m));
  for (const RankingKey& key : table.keys) {
    if (key.values.size() != c * m)
      throw DomainError("leaderboard: key " + key.name + " has " +
                        std::to_string(key.values.size()) +
                        " values, expected cases x methods = " + std::to_string(c * m));
    for (std::size_t i = 0; i < key.values.size(); ++i)
      if (!table.failed_in(i / m, i % m) && !std::isfinite(key.values[i]))
        throw DomainError("leaderboard: key " + key.name + ", case " + std::to_string(i / m) +
                          ", method " + table.methods[i % m] + ": the value is not finite");
  }
}

// Each case's bootstrap block as 0 .. G - 1, in order of first appearance.
std::vector<std::size_t> block_of_case(const LeaderboardTable& table, std::size_t& blocks) {
  std::map<std::size_t, std::size_t> index;
  std::vector<std::size_t> out;
  for (std::size_t id : table.clusters)
    out.push_back(index.try_emplace(id, index.size()).first->second);
  blocks = index.size();
  return out;
}

// Per resample, each case's multiplicity: its block's draw count. CalArena draws the blocks
// with numpy.random.choice(size=n_datasets, replace=True). The weights are not stored (resamples
// x cases doubles would be 3.2 GB for 2,000 resamples of 200,000 cases): each resample keeps the
// engine state it starts from, 32 bytes, and fill() draws its counts again, the same bits.
class CaseWeights {
 public:
  CaseWeights(std::vector<std::size_t> block, std::size_t blocks, std::size_t resamples,
              StreamKey stream)
      : block_(std::move(block)), blocks_(blocks) {
    Engine engine = make_engine(stream);
    for (std::size_t b = 0; b < resamples; ++b) {
      throw_if_stop_requested();
      starts_.push_back(engine.replay());
      for (std::size_t i = 0; i < blocks_; ++i) (void)engine();  // one draw per block, as fill()
    }
  }

  // Resample b's weight of every case, into `out`.
  void fill(std::size_t b, std::vector<double>& out) const {
    Engine engine = starts_[b].replay();
    std::vector<double> draws(blocks_, 0.0);
    for (std::size_t i = 0; i < blocks_; ++i) {
      const auto g = std::min(blocks_ - 1, static_cast<std::size_t>(uniform_open01(engine) *
                                                                    static_cast<double>(blocks_)));
      draws[g] += 1.0;
    }
    out.resize(block_.size());
    for (std::size_t c = 0; c < block_.size(); ++c) out[c] = draws[block_[c]];
  }

 private:
  std::vector<std::size_t> block_;
  std::size_t blocks_;
  std::vector<Engine> starts_;
};

// sum_c w_c x_c / sum_c w_c over the cases where x_c is a number.
double weighted_mean(const std::vector<double>& x, const std::vector<double>& w) {
  double s = 0.0, n = 0.0;
  for (std::size_t c = 0; c < x.size(); ++c)
    if (w[c] > 0.0 && !std::isnan(x[c])) {
      s += w[c] * x[c];
      n += w[c];
    }
  return n > 0.0 ? s / n : std::numeric_limits<double>::quiet_NaN();
}

Estimate interval(double value, std::vector<double> resampled, double level) {
  std::erase_if(resampled, [](double v) { return std::isnan(v); });  // CalArena: nanpercentile
  Estimate e;
  e.value = value;
  if (resampled.empty()) return e;
  e.lower = percentile(resampled, (1.0 - level) / 2.0);
  e.upper = percentile(std::move(resampled), 1.0 - (1.0 - level) / 2.0);
  return e;
}

// A key's values (case-major) oriented so that smaller is better, a failed method's +infinity:
// worse than every value, tied with the other failures (comparisons only, never differences).
std::vector<double> oriented(const LeaderboardTable& table, const RankingKey& key) {
  const std::size_t m = table.methods.size();
  std::vector<double> out(key.values.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = table.failed_in(i / m, i % m) ? std::numeric_limits<double>::infinity()
                                           : badness(key.values[i], key.better);
  return out;
}

// One key's games from its oriented values: in every case with weight w > 0, each pair of
// methods plays w games, the strictly better value winning, a tie half a win each (CalArena:
// np.select(..., "tie") and arena-rank's outcome 0.5).
PairwiseResults games_of(const std::vector<double>& bad, std::size_t methods,
                         const std::vector<double>& w) {
  PairwiseResults r(methods);
  for (std::size_t c = 0; c < w.size(); ++c) {
    if (w[c] == 0.0) continue;
    const double* v = bad.data() + c * methods;
    for (std::size_t a = 0; a < methods; ++a)
      for (std::size_t b = a + 1; b < methods; ++b)
        r.add(a, b, v[a] < v[b] ? 1.0 : (v[b] < v[a] ? 0.0 : 0.5), w[c]);
  }
  return r;
}

// Per case (case-major) and method: how many other methods are strictly worse (oriented
// values). Counts, not shares, so that the means below are exact (sums of small integers) and
// equal win rates tie exactly; the share is the count over M - 1.
std::vector<double> worse_counts(const std::vector<double>& bad, std::size_t methods,
                                 std::size_t cases) {
  std::vector<double> out(cases * methods, 0.0);
  for (std::size_t c = 0; c < cases; ++c) {
    const double* v = bad.data() + c * methods;
    for (std::size_t a = 0; a < methods; ++a)
      for (std::size_t b = 0; b < methods; ++b)
        if (b != a && v[b] > v[a]) out[c * methods + a] += 1.0;
  }
  return out;
}

// The paired difference of two agreements' resamples: resample b's x_b - y_b (NaN where either
// is; nanpercentile drops it).
std::vector<double> differences(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> out(x.size());
  for (std::size_t b = 0; b < x.size(); ++b) out[b] = x[b] - y[b];
  return out;
}

// sum_c w_c worse_c / ((M - 1) sum_c w_c): CalArena's mean of per-case win rates (its
// total_wins / total_experiments for a block bootstrap resample).
std::vector<double> mean_win_rates(const std::vector<double>& worse, std::size_t methods,
                                   const std::vector<double>& w) {
  std::vector<double> s(methods, 0.0);
  double n = 0.0;
  for (std::size_t c = 0; c < w.size(); ++c) {
    if (w[c] == 0.0) continue;
    n += w[c];
    for (std::size_t m = 0; m < methods; ++m) s[m] += w[c] * worse[c * methods + m];
  }
  for (double& x : s) x /= n * static_cast<double>(methods - 1);
  return s;
}

}  // namespace

std::string_view to_string(Better better) {
  return better == Better::lower ? "lower" : "higher";
}

std::vector<double> case_win_rates(std::span<const double> values, Better better) {
  const std::size_t m = values.size();
  std::vector<double> out(m, 0.0);
  if (m < 2) return out;
  for (std::size_t a = 0; a < m; ++a) {
    std::size_t worse = 0;
    for (std::size_t b = 0; b < m; ++b)
      if (b != a && badness(values[b], better) > badness(values[a], better)) ++worse;
    out[a] = static_cast<double>(worse) / static_cast<double>(m - 1);
  }
  return out;
}

double winner_agreement(std::span<const double> values, Better better,
                        std::span<const double> reference, Better reference_better) {
  const auto best = [](std::span<const double> v, Better b) {
    double x = badness(v[0], b);
    for (double y : v) x = std::min(x, badness(y, b));
    return x;
  };
  const double key_best = best(values, better), ref_best = best(reference, reference_better);
  double winners = 0, right = 0;
  for (std::size_t m = 0; m < values.size(); ++m)
    if (badness(values[m], better) == key_best) {
      ++winners;
      if (badness(reference[m], reference_better) == ref_best) ++right;
    }
  return right / winners;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double h = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= values.size()) return values.back();
  return values[lo] + (h - static_cast<double>(lo)) * (values[lo + 1] - values[lo]);
}

Leaderboards compute_leaderboards(const LeaderboardTable& table,
                                  const std::vector<std::pair<std::size_t, std::size_t>>& compare,
                                  const LeaderboardSettings& settings, StreamKey stream,
                                  std::size_t contrasted) {
  check_table(table, settings);
  for (const auto& [k, r] : compare)
    if (k >= table.keys.size() || r >= table.keys.size())
      throw DomainError("leaderboard: a compared key is out of range");
  const std::size_t M = table.methods.size(), C = table.cases(), K = table.keys.size();
  const std::size_t B = settings.resamples;
  Leaderboards out;
  out.cases = C;
  std::vector<std::size_t> block = block_of_case(table, out.clusters);
  const CaseWeights weights(std::move(block), out.clusters, B, stream);
  const std::vector<double> all(C, 1.0);
  std::vector<double> w;  // one resample's case weights at a time

  // Per key: its oriented values, the point estimates, then every resample's win rates (kept
  // for the agreements).
  std::vector<std::vector<double>> bad(K);
  std::vector<std::vector<double>> point_rates(K);
  std::vector<std::vector<std::vector<double>>> boot_rates(K);  // [key][resample][method]
  for (std::size_t k = 0; k < K; ++k) {
    const RankingKey& key = table.keys[k];
    bad[k] = oriented(table, key);
    const auto rates = worse_counts(bad[k], M, C);
    point_rates[k] = mean_win_rates(rates, M, all);
    // Each resample is a pass over every case: the stop request is polled per resample, so
    // Ctrl-C ends a board of many cases within a second (core/stop_request.hpp).
    for (std::size_t b = 0; b < B; ++b) {
      throw_if_stop_requested();
      weights.fill(b, w);
      boot_rates[k].push_back(mean_win_rates(rates, M, w));
    }
    const BradleyTerryFit elo = fit_bradley_terry(games_of(bad[k], M, all));
    std::vector<std::vector<double>> boot_elo;
    for (std::size_t b = 0; b < settings.elo_resamples; ++b) {
      throw_if_stop_requested();
      weights.fill(b, w);
      boot_elo.push_back(fit_bradley_terry(games_of(bad[k], M, w)).elo);
    }
    Board board;
    board.key = k;
    for (std::size_t m = 0; m < M; ++m) {
      Standing s;
      double sum = 0.0;
      for (std::size_t c = 0; c < C; ++c)
        if (table.failed_in(c, m))
          ++s.failed;
        else
          sum += key.values[c * M + m];
      s.mean = s.failed == C ? std::numeric_limits<double>::quiet_NaN()
                             : sum / static_cast<double>(C - s.failed);
      std::vector<double> wr, el;
      for (std::size_t b = 0; b < B; ++b) wr.push_back(boot_rates[k][b][m]);
      for (const auto& e : boot_elo) el.push_back(e[m]);
      s.win_rate = interval(point_rates[k][m], std::move(wr), settings.level);
      s.elo = interval(elo.elo[m], std::move(el), settings.level);
      s.rank = 1 + static_cast<std::size_t>(
                       std::count_if(point_rates[k].begin(), point_rates[k].end(),
                                     [&](double x) { return x > point_rates[k][m]; }));
      board.standings.push_back(s);
    }
    out.boards.push_back(std::move(board));
  }

  // Per agreement: its point values and resamples, [tau_b, case_tau_b, winner_agreement].
  struct Draws {
    std::array<double, 3> point;
    std::array<std::vector<double>, 3> resampled;
  };
  std::vector<Draws> draws;
  for (const auto& [k, r] : compare) {
    std::vector<double> case_tau(C), agree(C);
    RankAgreement a;
    a.key = k;
    a.reference = r;
    for (std::size_t c = 0; c < C; ++c) {
      if (c % 4096 == 0) throw_if_stop_requested();
      const auto v = std::span(bad[k]).subspan(c * M, M);
      const auto t = std::span(bad[r]).subspan(c * M, M);
      case_tau[c] = kendall_tau_b(v, t);
      if (!std::isnan(case_tau[c])) ++a.tau_cases;
      agree[c] = winner_agreement(v, Better::lower, t, Better::lower);
    }
    Draws d;
    d.point = {kendall_tau_b(point_rates[k], point_rates[r]), weighted_mean(case_tau, all),
               weighted_mean(agree, all)};
    for (std::size_t b = 0; b < B; ++b) {
      throw_if_stop_requested();
      d.resampled[0].push_back(kendall_tau_b(boot_rates[k][b], boot_rates[r][b]));
      weights.fill(b, w);
      d.resampled[1].push_back(weighted_mean(case_tau, w));
      d.resampled[2].push_back(weighted_mean(agree, w));
    }
    a.tau_b = interval(d.point[0], d.resampled[0], settings.level);
    a.case_tau_b = interval(d.point[1], d.resampled[1], settings.level);
    a.winner_agreement = interval(d.point[2], d.resampled[2], settings.level);
    out.agreements.push_back(a);
    draws.push_back(std::move(d));
  }

  // Contrasts: per reference in order of first appearance, each pair of its agreements.
  std::vector<std::size_t> references;
  for (const auto& [k, r] : compare)
    if (std::find(references.begin(), references.end(), r) == references.end())
      references.push_back(r);
  for (const std::size_t r : references)
    for (std::size_t i = 0; i < std::min(compare.size(), contrasted); ++i)
      for (std::size_t j = i + 1; j < std::min(compare.size(), contrasted); ++j) {
        if (compare[i].second != r || compare[j].second != r) continue;
        const Draws &x = draws[i], &y = draws[j];
        RankContrast rc;
        rc.key = compare[i].first;
        rc.other = compare[j].first;
        rc.reference = r;
        std::array<Estimate, 3> e;
        for (std::size_t q = 0; q < 3; ++q)
          e[q] = interval(x.point[q] - y.point[q], differences(x.resampled[q], y.resampled[q]),
                          settings.level);
        rc.tau_b = e[0];
        rc.case_tau_b = e[1];
        rc.winner_agreement = e[2];
        out.contrasts.push_back(rc);
      }
  return out;
}

}  // namespace calbench
