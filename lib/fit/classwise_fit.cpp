#include "fit/classwise_fit.hpp"

#include <LBFGS.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/format.hpp"
#include "core/task_kernel.hpp"
#include "fit/empirical_fit.hpp"
#include "fit/penalised_logistic.hpp"

namespace calbench {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::size_t order = 4;  // nonzero cubic B-splines at a point

using Rows = std::vector<std::size_t>;

// ---- 1. the top deviations -------------------------------------------------------------------

struct TopData {
  std::vector<double> knots;
  Eigen::MatrixXd basis;         // n x m
  Eigen::VectorXd offset;        // s(t_i)
  Eigen::VectorXd y;             // 1{label = top}
  std::vector<Rows> by_class;    // rows whose top class is k, ascending
  std::vector<std::size_t> top;  // each row's top class
};

// Class k's deviation fitted on `rows` (a subset of its rows) at `penalty`.
Eigen::VectorXd fit_deviation(const TopData& d, const Rows& rows, double penalty) {
  const Eigen::Index m = d.basis.cols();
  if (rows.empty()) return Eigen::VectorXd::Zero(m);
  Eigen::MatrixXd B(static_cast<Eigen::Index>(rows.size()), m);
  Eigen::VectorXd o(B.rows()), y(B.rows());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto i = static_cast<Eigen::Index>(rows[r]);
    B.row(static_cast<Eigen::Index>(r)) = d.basis.row(i);
    o(static_cast<Eigen::Index>(r)) = d.offset(i);
    y(static_cast<Eigen::Index>(r)) = d.y(i);
  }
  return penalised_logistic(B, o, y, penalty);
}

double deviation_log_likelihood(const TopData& d, const Rows& rows, const Eigen::VectorXd& beta) {
  double out = 0.0;
  for (std::size_t i : rows)
    out += bernoulli_log_likelihood(d.offset(static_cast<Eigen::Index>(i)) +
                                        d.basis.row(static_cast<Eigen::Index>(i)).dot(beta),
                                    d.y(static_cast<Eigen::Index>(i)));
  return out;
}

// Rows of `rows` (ascending) whose top class is k.
Rows intersect(const Rows& sorted_rows, const Rows& of_class) {
  Rows out;
  std::set_intersection(sorted_rows.begin(), sorted_rows.end(), of_class.begin(), of_class.end(),
                        std::back_inserter(out));
  return out;
}

// The deviations' common part removed (in place): the spline c on the same knots closest, in
// least squares over `rows`, to each row's deviation v_i = d_{top i}(t_i), subtracted from every
// class's deviation. Afterwards sum_i B_r(t_i) (d_{top i}(t_i)) = 0 over the rows for every
// B-spline r: the deviations move calibration between the classes that are top at a
// confidence and leave the top-label curve there, which step 2 fitted and measured, as it was
// (to first order in the logit). Without this the deviations' in-sample noise added to the
// fake's top-label calibration error (docs/fit.md, "The classwise study").
void centre_deviations(const TopData& d, const Rows& rows, std::vector<Eigen::VectorXd>& beta) {
  const Eigen::Index m = d.basis.cols();
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(m, m);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(m);
  for (std::size_t i : rows) {
    const auto b = d.basis.row(static_cast<Eigen::Index>(i));
    gram.noalias() += b.transpose() * b;
    rhs += b.transpose() * b.dot(beta[d.top[i]]);
  }
  // A basis function no row reaches has no data to centre: the tiny ridge keeps it at 0.
  gram.diagonal().array() += 1e-10 * (1.0 + gram.diagonal().maxCoeff());
  const Eigen::VectorXd common = gram.ldlt().solve(rhs);
  for (Eigen::VectorXd& b : beta) b -= common;
}

void fit_top(const ClasswiseData& data, const ClasswiseFitOptions& options,
             const std::vector<Rows>& train, const std::vector<Rows>& test, ClasswiseFit& out) {
  const std::size_t n = data.t.size(), K = data.classes, F = train.size();
  TopData d;
  d.knots = quantile_knots(std::vector<double>(data.t.begin(), data.t.end()), options.top_knots);
  if (d.knots.empty() || options.top_penalties.empty()) return;
  const std::size_t m = spline_basis_size(d.knots.size());
  d.basis.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(m));
  d.offset.resize(static_cast<Eigen::Index>(n));
  d.y.resize(static_cast<Eigen::Index>(n));
  d.by_class.resize(K);
  d.top.assign(data.top.begin(), data.top.end());
  Rows all_rows(n);
  for (std::size_t i = 0; i < n; ++i) all_rows[i] = i;
  std::vector<double> row(m);
  for (std::size_t i = 0; i < n; ++i) {
    spline_basis(d.knots, data.t[i], row);
    for (std::size_t j = 0; j < m; ++j)
      d.basis(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = row[j];
    d.offset(static_cast<Eigen::Index>(i)) = calibrated_logit(*data.curve, data.t[i]);
    d.y(static_cast<Eigen::Index>(i)) = data.label[i] == data.top[i] ? 1.0 : 0.0;
    d.by_class[data.top[i]].push_back(i);
  }
  // Held-out log-likelihood of a penalty (infinity: no deviations): the deviations of every
  // class and fold in parallel, centred fold by fold, then scored.
  const auto score = [&](double penalty) {
    if (!std::isfinite(penalty)) {
      double sum = 0.0;
      for (std::size_t f = 0; f < F; ++f)
        sum += deviation_log_likelihood(d, test[f],
                                        Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m)));
      return sum;
    }
    std::vector<Eigen::VectorXd> beta(K * F);
    for_each_index(K * F, [&](std::size_t task) {
      const std::size_t k = task / F, f = task % F;
      beta[task] = fit_deviation(d, intersect(train[f], d.by_class[k]), penalty);
    });
    for (std::size_t f = 0; f < F; ++f) {
      std::vector<Eigen::VectorXd> fold(K);
      for (std::size_t k = 0; k < K; ++k) fold[k] = beta[k * F + f];
      centre_deviations(d, train[f], fold);
      for (std::size_t k = 0; k < K; ++k) beta[k * F + f] = fold[k];
    }
    std::vector<double> slots(K * F, 0.0);
    for_each_index(K * F, [&](std::size_t task) {
      const std::size_t k = task / F, f = task % F;
      slots[task] = deviation_log_likelihood(d, intersect(test[f], d.by_class[k]), beta[task]);
    });
    double sum = 0.0;
    for (double v : slots) sum += v;
    return sum;
  };
  double best = score(inf), chosen = inf;
  out.top_scores.push_back({"none", inf, best});
  std::vector<double> grid = options.top_penalties;
  std::sort(grid.begin(), grid.end(), std::greater<>());
  for (double penalty : grid) {
    const double v = score(penalty);
    out.top_scores.push_back({"top " + format_double(penalty), penalty, v});
    if (v > best) best = v, chosen = penalty;
  }
  if (!std::isfinite(chosen)) return;
  out.top_choice = "top " + format_double(chosen);
  out.map.top_knots = d.knots;
  out.map.top.assign(K * m, 0.0);
  std::vector<Eigen::VectorXd> beta(K);
  for_each_index(K, [&](std::size_t k) { beta[k] = fit_deviation(d, d.by_class[k], chosen); });
  centre_deviations(d, all_rows, beta);
  for (std::size_t k = 0; k < K; ++k)
    std::copy(beta[k].data(), beta[k].data() + beta[k].size(), out.map.top.begin() + k * m);
}

// ---- 2. the other classes --------------------------------------------------------------------

// One non-top entry (row i, class j) of a wrong row: its log p, the first nonzero B-spline and
// their values at u = logit p_j.
struct Entry {
  double log_p;
  std::uint32_t cls, span;
  double basis[order];
};

struct OtherData {
  std::size_t classes = 0, m = 0;
  std::vector<std::size_t> first;  // wrong row r's entries: [first[r], first[r + 1])
  std::vector<std::size_t> label;  // entry index of the label of wrong row r
  std::vector<std::size_t> row;    // the data row of wrong row r
  std::vector<Entry> entries;
};

// The candidate: the shared spline (always) and the per-class ones when with_classes.
struct OtherObjective {
  const OtherData& d;
  const std::vector<std::size_t>& rows;  // wrong rows (indices into d.first) fitted on
  double shared_penalty, class_penalty;
  bool with_classes;

  // Parameters: a (m), then e (K x m) when with_classes.
  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) const {
    const std::size_t m = d.m;
    grad.setZero();
    double value = 0.0;
    std::vector<double> w;
    for (std::size_t r : rows) {
      const std::size_t a = d.first[r], b = d.first[r + 1];
      w.resize(b - a);
      double largest = -inf;
      for (std::size_t e = a; e < b; ++e) {
        const Entry& q = d.entries[e];
        double f = 0.0;
        for (std::size_t s = 0; s < order; ++s) {
          const std::size_t c = q.span + s;
          f +=
              q.basis[s] * (x(static_cast<Eigen::Index>(c)) +
                            (with_classes ? x(static_cast<Eigen::Index>(m + q.cls * m + c)) : 0.0));
        }
        w[e - a] = q.log_p + f;
        largest = std::max(largest, w[e - a]);
      }
      double sum = 0.0;
      for (double& v : w) sum += v = std::exp(v - largest);
      value -= std::log(w[d.label[r] - a] / sum);
      for (std::size_t e = a; e < b; ++e) {
        const Entry& q = d.entries[e];
        const double residual = w[e - a] / sum - (e == d.label[r] ? 1.0 : 0.0);
        for (std::size_t s = 0; s < order; ++s) {
          const std::size_t c = q.span + s;
          grad(static_cast<Eigen::Index>(c)) += residual * q.basis[s];
          if (with_classes)
            grad(static_cast<Eigen::Index>(m + q.cls * m + c)) += residual * q.basis[s];
        }
      }
    }
    const auto M = static_cast<Eigen::Index>(m);
    value += shared_penalty * x.head(M).squaredNorm();
    grad.head(M) += 2.0 * shared_penalty * x.head(M);
    if (with_classes) {
      const Eigen::Index rest = x.size() - M;
      value += class_penalty * x.tail(rest).squaredNorm();
      grad.tail(rest) += 2.0 * class_penalty * x.tail(rest);
    }
    return value;
  }
};

// L-BFGS on the objective per row fitted (the same minimiser; the tolerances then do not grow
// with n): stops when the mean gradient's norm is below 1e-5 or the mean objective has moved
// by less than 1e-8 of itself over 3 iterations, at most 200. At K = 100 the absolute
// tolerances of 1e-6 ran to 500 iterations on every candidate (a 5,000-row fit took 155 CPU-s).
Eigen::VectorXd minimise(const OtherObjective& objective, Eigen::VectorXd x) {
  LBFGSpp::LBFGSParam<double> param;
  param.epsilon = 1e-5;
  param.epsilon_rel = 0.0;
  param.max_iterations = 200;
  param.past = 3;
  param.delta = 1e-8;
  param.max_linesearch = 60;
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  LBFGSpp::LBFGSSolver<double> solver(param);
  double fx = 0.0;
  const double scale = 1.0 / static_cast<double>(std::max<std::size_t>(objective.rows.size(), 1));
  auto f = [&](const Eigen::VectorXd& v, Eigen::VectorXd& g) {
    const double value = objective(v, g) * scale;
    g *= scale;
    return value;
  };
  try {
    solver.minimize(f, x, fx);
  } catch (const std::exception&) {
    // A line search that cannot improve further near the optimum: x holds the last accepted
    // point, which is what we keep.
  }
  return x;
}

double other_log_likelihood(const OtherData& d, const std::vector<std::size_t>& rows,
                            const Eigen::VectorXd& x, bool with_classes) {
  if (rows.empty()) return 0.0;
  Eigen::VectorXd grad(x.size());
  const OtherObjective o{d, rows, 0.0, 0.0, with_classes};
  return -o(x, grad);
}

void fit_other(const ClasswiseData& data, const ClasswiseFitOptions& options,
               const std::vector<Rows>& train, const std::vector<Rows>& test, ClasswiseFit& out) {
  const std::size_t n = data.t.size(), K = data.classes, F = train.size();
  std::vector<double> label_u;
  std::vector<std::size_t> wrong;
  for (std::size_t i = 0; i < n; ++i)
    if (data.label[i] != data.top[i]) {
      wrong.push_back(i);
      const double l = data.log_p[i * K + data.label[i]];
      label_u.push_back(l - std::log1p(-std::exp(l)));
    }
  out.wrong_rows = wrong.size();
  OtherData d;
  d.classes = K;
  const std::vector<double> knots = quantile_knots(label_u, options.other_knots);
  if (knots.empty() || wrong.size() < 2) return;
  d.m = spline_basis_size(knots.size());
  std::vector<double> basis(d.m);
  for (std::size_t i : wrong) {
    d.first.push_back(d.entries.size());
    d.row.push_back(i);
    for (std::size_t j = 0; j < K; ++j) {
      if (j == data.top[i]) continue;
      Entry q{};
      q.log_p = data.log_p[i * K + j];
      q.cls = static_cast<std::uint32_t>(j);
      spline_basis(knots, q.log_p - std::log1p(-std::exp(q.log_p)), basis);
      std::size_t span = 0;
      while (span + order < d.m && basis[span] == 0.0) ++span;
      q.span = static_cast<std::uint32_t>(span);
      for (std::size_t s = 0; s < order; ++s) q.basis[s] = basis[span + s];
      if (j == data.label[i]) d.label.push_back(d.entries.size());
      d.entries.push_back(q);
    }
  }
  d.first.push_back(d.entries.size());
  // Per fold, the wrong rows (positions in d) of its train and test rows.
  std::vector<std::size_t> position(n, SIZE_MAX);
  for (std::size_t r = 0; r < wrong.size(); ++r) position[wrong[r]] = r;
  std::vector<std::vector<std::size_t>> fold_train(F), fold_test(F);
  for (std::size_t f = 0; f < F; ++f) {
    for (std::size_t i : train[f])
      if (position[i] != SIZE_MAX) fold_train[f].push_back(position[i]);
    for (std::size_t i : test[f])
      if (position[i] != SIZE_MAX) fold_test[f].push_back(position[i]);
    std::sort(fold_train[f].begin(), fold_train[f].end());
    std::sort(fold_test[f].begin(), fold_test[f].end());
  }
  const std::size_t shared_size = d.m, full_size = d.m + K * d.m;
  struct Candidate {
    std::string name;
    bool shared, with_classes;
    double class_penalty;
  };
  std::vector<Candidate> candidates = {{"none", false, false, inf}, {"shared", true, false, inf}};
  std::vector<double> grid = options.other_penalties;
  std::sort(grid.begin(), grid.end(), std::greater<>());
  for (double penalty : grid)
    candidates.push_back({"shared + classes " + format_double(penalty), true, true, penalty});
  // Each fold fits the candidates in order, warm-started from the previous one (folds in
  // parallel, each into its own slots).
  std::vector<double> slots(F * candidates.size(), 0.0);
  for_each_index(F, [&](std::size_t f) {
    Eigen::VectorXd x = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(full_size));
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const Candidate& cand = candidates[c];
      if (cand.shared) {
        const OtherObjective objective{d, fold_train[f], options.shared_penalty, cand.class_penalty,
                                       cand.with_classes};
        if (cand.with_classes) {
          x = minimise(objective, x);
        } else {
          x.head(static_cast<Eigen::Index>(shared_size)) =
              minimise(objective, x.head(static_cast<Eigen::Index>(shared_size)));
        }
      }
      slots[f * candidates.size() + c] = other_log_likelihood(
          d, fold_test[f],
          cand.with_classes ? x : Eigen::VectorXd(x.head(static_cast<Eigen::Index>(shared_size))),
          cand.with_classes);
    }
  });
  std::size_t chosen = 0;
  double best = -inf;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    double v = 0.0;
    for (std::size_t f = 0; f < F; ++f) v += slots[f * candidates.size() + c];
    out.other_scores.push_back(
        {candidates[c].name,
         c == 0 ? inf : (candidates[c].with_classes ? candidates[c].class_penalty : 0.0), v});
    if (v > best) best = v, chosen = c;
  }
  if (chosen == 0) return;
  // The chosen candidate on every wrong row, along the same path.
  std::vector<std::size_t> every(wrong.size());
  for (std::size_t r = 0; r < every.size(); ++r) every[r] = r;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(full_size));
  for (std::size_t c = 1; c <= chosen; ++c) {
    const Candidate& cand = candidates[c];
    const OtherObjective objective{d, every, options.shared_penalty, cand.class_penalty,
                                   cand.with_classes};
    if (cand.with_classes)
      x = minimise(objective, x);
    else
      x.head(static_cast<Eigen::Index>(shared_size)) =
          minimise(objective, x.head(static_cast<Eigen::Index>(shared_size)));
  }
  out.other_choice = candidates[chosen].name;
  out.map.other_knots = knots;
  out.map.other_shared.assign(x.data(), x.data() + shared_size);
  if (candidates[chosen].with_classes)
    out.map.other.assign(x.data() + shared_size, x.data() + full_size);
}

}  // namespace

ClasswiseFit fit_classwise(const ClasswiseData& data, const ClasswiseFitOptions& options) {
  ClasswiseFit out;
  if (!options.enabled || data.classes < 3) return out;
  std::vector<Rows> train = *data.train, test = *data.test;
  for (Rows& r : train) std::sort(r.begin(), r.end());
  for (Rows& r : test) std::sort(r.begin(), r.end());
  fit_top(data, options, train, test, out);
  fit_other(data, options, train, test, out);
  if (!is_identity(out.map)) out.map.classes = data.classes;
  return out;
}

}  // namespace calbench
