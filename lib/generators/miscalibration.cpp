#include "generators/miscalibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/fast_math.hpp"
#include "core/format.hpp"

namespace calbench {
namespace {

void require_positive_finite(double value, const std::string& name) {
  if (!(std::isfinite(value) && value > 0.0))
    throw DomainError(name + " = " + format_double(value) + ": must be a finite number > 0");
}

// p = softmax(z) with z in scratch-free form; log p = z - logsumexp(z).
void softmax_from_logits(std::span<const double> z, std::span<double> p, std::span<double> log_p) {
  // One vectorised pass of exponentials (core/fast_math.hpp); the largest term is
  // exp(0) = 1 exactly.
  const std::size_t K = z.size();
  const double zmax = *std::max_element(z.begin(), z.end());
  for (std::size_t k = 0; k < K; ++k) p[k] = z[k] - zmax;
  fast::exp_bulk(p.data(), p.data(), K);
  const double sum = fast::sum(p.data(), K);  // as in the samplers' fused passes
  const double inv = 1.0 / sum;
  for (double& v : p) v *= inv;
  if (!log_p.empty()) {
    const double lse = zmax + std::log(sum);
    for (std::size_t k = 0; k < z.size(); ++k) log_p[k] = z[k] - lse;
  }
}

std::size_t argmax(std::span<const double> v) {
  return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

void apply_top_label(double gamma, std::span<const double> c, std::span<const double> log_c,
                     std::span<double> p, std::span<double> log_p) {
  const std::size_t K = c.size();
  const double Kd = static_cast<double>(K);
  const std::size_t top = argmax(log_c);
  // s = 1 - m, summed from the other components: exact where 1 - m would cancel.
  double s = 0.0;
  for (std::size_t k = 0; k < K; ++k)
    if (k != top) s += c[k];
  const double spread = 1.0 - 1.0 / Kd;              // 1 - 1/K
  const double u = std::max(0.0, 1.0 - s / spread);  // (m - 1/K)/(1 - 1/K)
  // 1 - g = (1 - 1/K)(1 - u^gamma), with 1 - u^gamma = -expm1(gamma log1p(-s/spread)).
  const double one_minus_ug =
      u > 0.0 ? -std::expm1(gamma * std::log1p(-std::min(s / spread, 1.0))) : 1.0;
  const double one_minus_g = spread * one_minus_ug;
  // Scale of the other components, (1 - g)/(1 - m); its limit as s -> 0 is gamma.
  const double scale = s > 0.0 ? one_minus_g / s : gamma;
  const double log_scale = std::log(scale);
  for (std::size_t k = 0; k < K; ++k) {
    if (k == top) {
      p[k] = 1.0 - one_minus_g;
      if (!log_p.empty()) log_p[k] = std::log1p(-one_minus_g);
    } else {
      p[k] = c[k] * scale;
      if (!log_p.empty()) log_p[k] = log_c[k] + log_scale;
    }
  }
}

void apply_quantize(std::size_t levels, std::span<const double> c, std::span<const double> log_c,
                    std::span<double> p, std::span<double> log_p) {
  const std::size_t K = c.size();
  const std::size_t top = argmax(log_c);
  // log(1 - m) as the log-sum of the other components, exact where they underflow.
  double largest = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < K; ++k)
    if (k != top) largest = std::max(largest, log_c[k]);
  double sum = 0.0;
  for (std::size_t k = 0; k < K; ++k)
    if (k != top) sum += std::exp(log_c[k] - largest);
  const double level = quantize_level(c[top], levels);
  const double log_scale = std::log1p(-level) - (largest + std::log(sum));  // (1 - l)/(1 - m)
  for (std::size_t k = 0; k < K; ++k) {
    const double lp = k == top ? std::log(level) : log_c[k] + log_scale;
    p[k] = k == top ? level : std::exp(lp);
    if (!log_p.empty()) log_p[k] = lp;
  }
}

}  // namespace

double quantize_level(double m, std::size_t levels) {
  const double L = static_cast<double>(levels);
  const double i = std::min(std::floor(L * m), L - 1.0);
  const double nearest = (i + 0.5) / L;
  return nearest >= m || nearest > 0.5 ? nearest : (i + 1.5) / L;
}

std::vector<QuantizeCell> quantize_cells(std::size_t levels) {
  // quantize_level is constant between consecutive points of {i/L} u {l_i} u {1/2} (its cell
  // index, its comparison with m and with 1/2 do not change there): evaluate it at each
  // interval's midpoint and merge neighbours that report the same level.
  const double L = static_cast<double>(levels);
  std::vector<double> breaks = {0.0, 0.5, 1.0};
  for (std::size_t i = 1; i < levels; ++i) breaks.push_back(static_cast<double>(i) / L);
  for (std::size_t i = 0; i < levels; ++i) breaks.push_back((static_cast<double>(i) + 0.5) / L);
  std::sort(breaks.begin(), breaks.end());
  breaks.erase(std::unique(breaks.begin(), breaks.end()), breaks.end());
  std::vector<QuantizeCell> cells;
  for (std::size_t b = 0; b + 1 < breaks.size(); ++b) {
    const double level = quantize_level(0.5 * (breaks[b] + breaks[b + 1]), levels);
    if (!cells.empty() && cells.back().level == level)
      cells.back().hi = breaks[b + 1];
    else
      cells.push_back({breaks[b], breaks[b + 1], level});
  }
  return cells;
}

double top_label_g(double m, double gamma, std::size_t classes) {
  const double Kd = static_cast<double>(classes);
  const double u = std::clamp((m - 1.0 / Kd) / (1.0 - 1.0 / Kd), 0.0, 1.0);
  return 1.0 / Kd + (1.0 - 1.0 / Kd) * std::pow(u, gamma);
}

void validate(const MiscalibrationMap& map, std::size_t classes) {
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, TemperatureMap>) {
          require_positive_finite(m.temperature, "temperature");
        } else if constexpr (std::is_same_v<M, PowerMap>) {
          if (m.exponents.size() != classes)
            throw DomainError("exponents has " + std::to_string(m.exponents.size()) +
                              " entries: must have one per class (" + std::to_string(classes) +
                              ")");
          for (std::size_t k = 0; k < classes; ++k)
            require_positive_finite(m.exponents[k], "exponents[" + std::to_string(k) + "]");
        } else if constexpr (std::is_same_v<M, TopLabelMap>) {
          require_positive_finite(m.gamma, "gamma");
        } else if constexpr (std::is_same_v<M, AffineLogitMap>) {
          if (m.weights.size() != classes * classes)
            throw DomainError("weights has " + std::to_string(m.weights.size()) +
                              " entries: must be a " + std::to_string(classes) + " x " +
                              std::to_string(classes) + " matrix");
          if (m.bias.size() != classes)
            throw DomainError("bias has " + std::to_string(m.bias.size()) +
                              " entries: must have one per class (" + std::to_string(classes) +
                              ")");
          for (double w : m.weights)
            if (!std::isfinite(w)) throw DomainError("weights: every entry must be finite");
          for (double b : m.bias)
            if (!std::isfinite(b)) throw DomainError("bias: every entry must be finite");
        } else if constexpr (std::is_same_v<M, QuantizeMap>) {
          if (m.levels < quantize_min_levels || m.levels > quantize_max_levels)
            throw DomainError("levels = " + std::to_string(m.levels) + ": must be in [" +
                              std::to_string(quantize_min_levels) + ", " +
                              std::to_string(quantize_max_levels) + "]");
        }
      },
      map);
}

std::string map_name(const MiscalibrationMap& map) {
  static const char* const names[] = {"identity",  "temperature",  "power",
                                      "top_label", "affine_logit", "quantize"};
  return names[map.index()];
}

std::string canonical_text(const MiscalibrationMap& map) {
  std::string out = map_name(map);
  auto list = [](const std::vector<double>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i > 0) s.append(1, ',');
      s.append(format_double(v[i]));
    }
    return s + "]";
  };
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, TemperatureMap>)
          out += ":T=" + format_double(m.temperature);
        if constexpr (std::is_same_v<M, PowerMap>) out += ":t=" + list(m.exponents);
        if constexpr (std::is_same_v<M, TopLabelMap>) out += ":gamma=" + format_double(m.gamma);
        if constexpr (std::is_same_v<M, AffineLogitMap>)
          out += ":W=" + list(m.weights) + ":b=" + list(m.bias);
        if constexpr (std::is_same_v<M, QuantizeMap>) out += ":levels=" + std::to_string(m.levels);
      },
      map);
  return out;
}

void apply(const MiscalibrationMap& map, std::span<const double> c, std::span<const double> log_c,
           std::span<double> p, std::span<double> log_p, std::span<double> scratch) {
  const std::size_t K = c.size();
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, IdentityMap>) {
          std::copy(c.begin(), c.end(), p.begin());
          if (!log_p.empty()) std::copy(log_c.begin(), log_c.end(), log_p.begin());
        } else if constexpr (std::is_same_v<M, TemperatureMap>) {
          const double inv_t = 1.0 / m.temperature;
          for (std::size_t k = 0; k < K; ++k) scratch[k] = log_c[k] * inv_t;
          softmax_from_logits(scratch.first(K), p, log_p);
        } else if constexpr (std::is_same_v<M, PowerMap>) {
          for (std::size_t k = 0; k < K; ++k) scratch[k] = log_c[k] * m.exponents[k];
          softmax_from_logits(scratch.first(K), p, log_p);
        } else if constexpr (std::is_same_v<M, TopLabelMap>) {
          apply_top_label(m.gamma, c, log_c, p, log_p);
        } else if constexpr (std::is_same_v<M, AffineLogitMap>) {
          for (std::size_t i = 0; i < K; ++i) {
            double z = m.bias[i];
            const double* row = m.weights.data() + i * K;
            for (std::size_t j = 0; j < K; ++j) z += row[j] * log_c[j];
            scratch[i] = z;
          }
          softmax_from_logits(scratch.first(K), p, log_p);
        } else if constexpr (std::is_same_v<M, QuantizeMap>) {
          apply_quantize(m.levels, c, log_c, p, log_p);
        }
      },
      map);
}

namespace {

// identity, temperature and power with equal exponents: p_k ∝ c_k^(1/T) for one T.
bool acts_as_temperature(const MiscalibrationMap& map) {
  if (const auto* power = std::get_if<PowerMap>(&map)) {
    const auto& t = power->exponents;
    return std::all_of(t.begin(), t.end(), [&](double v) { return v == t.front(); });
  }
  return std::holds_alternative<IdentityMap>(map) || std::holds_alternative<TemperatureMap>(map);
}

// top_label keeps the argmax for gamma <= 1, and on K = 2 for any gamma (no runner-up can
// overtake a component that stays >= 1/2).
bool is_argmax_keeping_top_label(const MiscalibrationMap& map, std::size_t classes) {
  const auto* top = std::get_if<TopLabelMap>(&map);
  return top != nullptr && (top->gamma <= 1.0 || classes == 2);
}

}  // namespace

bool is_identity(const MiscalibrationMap& map) {
  if (const auto* t = std::get_if<TemperatureMap>(&map)) return t->temperature == 1.0;
  if (const auto* g = std::get_if<TopLabelMap>(&map)) return g->gamma == 1.0;
  if (const auto* power = std::get_if<PowerMap>(&map))
    return std::all_of(power->exponents.begin(), power->exponents.end(),
                       [](double v) { return v == 1.0; });
  return std::holds_alternative<IdentityMap>(map);
}

bool is_class_symmetric(const MiscalibrationMap& map) {
  return acts_as_temperature(map) || std::holds_alternative<TopLabelMap>(map) ||
         std::holds_alternative<QuantizeMap>(map);
}

bool preserves_argmax(const MiscalibrationMap& map, std::size_t classes) {
  // affine_logit may or may not keep the argmax: answered conservatively. quantize keeps it by
  // its choice of level.
  return acts_as_temperature(map) || is_argmax_keeping_top_label(map, classes) ||
         std::holds_alternative<QuantizeMap>(map);
}

bool is_injective(const MiscalibrationMap& map, std::size_t classes) {
  // quantize: every m of a cell with the same proportions among the others gives one p.
  if (std::holds_alternative<QuantizeMap>(map)) return false;
  if (std::holds_alternative<TopLabelMap>(map)) return is_argmax_keeping_top_label(map, classes);
  if (!std::holds_alternative<AffineLogitMap>(map)) return true;  // S = span(1/t), one sign
  const LogAffineFibres fibres = log_affine_fibres(log_affine_form(map, classes), classes);
  if (fibres.dimension != 1) return false;
  double largest = 0.0;
  for (double v : fibres.direction) largest = std::max(largest, std::abs(v));
  // Oriented to a sum >= 0: one sign means no component clearly negative.
  return std::all_of(fibres.direction.begin(), fibres.direction.end(),
                     [&](double v) { return v >= -1e-12 * largest; });
}

LogAffineForm log_affine_form(const MiscalibrationMap& map, std::size_t classes) {
  const std::size_t K = classes;
  LogAffineForm out;
  if (std::holds_alternative<TopLabelMap>(map) || std::holds_alternative<QuantizeMap>(map))
    return out;
  // W as a function of (i, j), b as a function of i.
  const auto weight = [&](std::size_t i, std::size_t j) -> double {
    if (const auto* a = std::get_if<AffineLogitMap>(&map)) return a->weights[i * K + j];
    if (i != j) return 0.0;
    if (const auto* t = std::get_if<TemperatureMap>(&map)) return 1.0 / t->temperature;
    if (const auto* p = std::get_if<PowerMap>(&map)) return p->exponents[i];
    return 1.0;  // identity
  };
  const auto bias = [&](std::size_t i) {
    const auto* a = std::get_if<AffineLogitMap>(&map);
    return a != nullptr ? a->bias[i] : 0.0;
  };
  out.D.resize((K - 1) * K);
  out.d.resize(K - 1);
  for (std::size_t k = 0; k + 1 < K; ++k) {
    for (std::size_t j = 0; j < K; ++j) out.D[k * K + j] = weight(k, j) - weight(K - 1, j);
    out.d[k] = bias(k) - bias(K - 1);
  }
  return out;
}

LogAffineFibres log_affine_fibres(const LogAffineForm& form, std::size_t classes) {
  const auto K = static_cast<Eigen::Index>(classes);
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> D(
      form.D.data(), K - 1, K);
  Eigen::FullPivLU<Eigen::MatrixXd> lu(D);
  lu.setThreshold(1e-12);
  const Eigen::MatrixXd kernel = lu.kernel();
  LogAffineFibres out;
  out.dimension = static_cast<std::size_t>(K - lu.rank());
  if (out.dimension == 1) {
    out.direction.assign(static_cast<std::size_t>(K), 0.0);
    double norm = 0.0, sum = 0.0;
    for (Eigen::Index k = 0; k < K; ++k) {
      const double v = kernel(k, 0);
      norm += v * v;
      sum += v;
    }
    const double scale = (sum < 0.0 ? -1.0 : 1.0) / std::sqrt(norm);
    for (Eigen::Index k = 0; k < K; ++k)
      out.direction[static_cast<std::size_t>(k)] = kernel(k, 0) * scale;
  }
  return out;
}

bool has_sign_constant_top_gap(const MiscalibrationMap& map, std::size_t classes) {
  return acts_as_temperature(map) || is_argmax_keeping_top_label(map, classes);
}

}  // namespace calbench
