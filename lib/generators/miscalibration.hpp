#pragma once
// Miscalibration maps h: the true class distribution c -> the reported confidence vector p.
// Definitions are the design's (DESIGN.md §1). Every map works from log c so that components
// of c that underflow (alpha << 1) still give finite, correctly ordered log p.
#include <cstddef>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace calbench {

struct IdentityMap {};

// p_k ∝ c_k^(1/T). T < 1 overconfident, T > 1 underconfident.
struct TemperatureMap {
  double temperature = 1.0;
};

// p_k ∝ c_k^(t_k): class-dependent miscalibration.
struct PowerMap {
  std::vector<double> exponents;
};

// kyle's max-component automorphism: with m = max c and u = (m - 1/K)/(1 - 1/K), the top
// component becomes g(m) = 1/K + (1 - 1/K) u^gamma and the others are scaled by
// (1 - g(m))/(1 - m). gamma < 1 overconfident.
struct TopLabelMap {
  double gamma = 1.0;
};

// p = softmax(W log c + b), W row-major K x K.
struct AffineLogitMap {
  std::vector<double> weights;
  std::vector<double> bias;
};

// Verbalised confidence ("I am 85 % sure", as LLMs state it): the top component becomes a
// level of the grid l_i = (i + 1/2)/L, i = 0..L-1 (L = `levels`), the others are scaled by
// (1 - l)/(1 - m), m = max c. The level is the one nearest to m among the admissible ones,
// l >= m or l > 1/2, ties to the higher (quantize_level): exactly the levels that keep the
// stated answer the top class whatever the other components (docs/generators.md), so the
// reported confidence takes at most L values and p's argmax is c's.
struct QuantizeMap {
  std::size_t levels = 10;
};
// L >= 2: with one level (1/2) no level above 1/2 is left for m > 1/2. At most 1000: the
// truth integrates over each cell below 1/2 (docs/truth.md), and finer grids than 0.1 %
// are no verbalised confidence.
inline constexpr std::size_t quantize_min_levels = 2, quantize_max_levels = 1000;

using MiscalibrationMap =
    std::variant<IdentityMap, TemperatureMap, PowerMap, TopLabelMap, AffineLogitMap, QuantizeMap>;

// Checks the map's parameters for K classes; throws DomainError naming the parameter.
void validate(const MiscalibrationMap& map, std::size_t classes);

// The registry name of the map ("identity", "temperature", ...).
std::string map_name(const MiscalibrationMap& map);

// Canonical text of the parameters (shortest round-trip doubles), for truth-cache keys.
std::string canonical_text(const MiscalibrationMap& map);

// Applies h to one vector. c and log_c describe the same point (log_c exact even where c
// underflows to 0); writes p and, if log_p is not empty, log p. `scratch` holds K doubles.
void apply(const MiscalibrationMap& map, std::span<const double> c, std::span<const double> log_c,
           std::span<double> p, std::span<double> log_p, std::span<double> scratch);

// True when h is the identity whatever its type (temperature 1, gamma 1, unit exponents).
bool is_identity(const MiscalibrationMap& map);

// True when h treats the classes alike (permuting c permutes p), so that with symmetric alpha
// the classes are exchangeable.
bool is_class_symmetric(const MiscalibrationMap& map);

// True when the map keeps the argmax (p's argmax is c's argmax for every c).
bool preserves_argmax(const MiscalibrationMap& map, std::size_t classes);

// True when h is injective on the open simplex, so r(p) = E[c | p] = c. Every map but
// top_label is log-affine (log_affine_form): then h(c) = h(c') iff log c - log c' lies in the
// subspace S = {delta : W delta in span(1)}, and two points of {l : sum_k e^(l_k) = 1} differ
// by delta iff delta has components of both signs (sum_k c_k (e^(delta_k) - 1) = 0 needs terms
// of both signs). So h is injective iff every nonzero vector of S has one sign, i.e. iff S is
// spanned by one vector with no two components of opposite signs (a subspace of dimension
// >= 2 always holds a vector of mixed signs). identity, temperature and power: S = span of
// (1/t_k), injective; affine_logit: decided by log_affine_fibres.
bool is_injective(const MiscalibrationMap& map, std::size_t classes);

// The log-affine form of every map but top_label and quantize: alr(p)_k = log(p_k/p_K)
// = sum_j D_kj log c_j + d_k (k < K), with D_kj = W_kj - W_Kj and d_k = b_k - b_K for
// p = softmax(W log c + b) (identity: W = I; temperature: I/T; power: diag(t)). D is stored
// row-major, (K - 1) x K. Empty for top_label and quantize.
struct LogAffineForm {
  std::vector<double> D, d;
};
LogAffineForm log_affine_form(const MiscalibrationMap& map, std::size_t classes);

// The fibres of a log-affine map: S = ker D (the directions along which log c moves without
// changing p), its dimension (numerical rank with a relative threshold of 1e-12), and when it
// is one a unit vector spanning it, oriented so that its components sum to >= 0.
struct LogAffineFibres {
  std::size_t dimension = 0;
  std::vector<double> direction;
};
LogAffineFibres log_affine_fibres(const LogAffineForm& form, std::size_t classes);

// True when P(y = argmax p | Z) - Z has one sign for every Z = max p, so that
// ece_top_l1 = |E[Z] - accuracy| (temperature either side of 1, top_label with gamma <= 1,
// identity; and top_label with any gamma when K = 2, where no runner-up can overtake). The
// proof for temperature: for T < 1, max_k c_k^(1/T)/sum_j c_j^(1/T)
// = 1/sum_j (c_j/m)^(1/T) >= 1/sum_j (c_j/m) = m, so Z >= max c pointwise and the argmax is
// kept, hence E[max c | Z] <= Z; T > 1 reverses every inequality.
bool has_sign_constant_top_gap(const MiscalibrationMap& map, std::size_t classes);

// The top-label map's g, exposed for the truth engine.
double top_label_g(double m, double gamma, std::size_t classes);

// quantize: the level reported for the top component m (QuantizeMap). With i = min(floor(L m),
// L - 1) the nearest level is l_i; it is kept when admissible (l_i >= m or l_i > 1/2), else
// l_(i+1), the smallest level above m.
double quantize_level(double m, std::size_t levels);

// The cells of quantize: the intervals (lo, hi] of m that report one level, in increasing
// order, covering [0, 1] (a level that no m reports has no cell).
struct QuantizeCell {
  double lo = 0.0, hi = 0.0, level = 0.0;
};
std::vector<QuantizeCell> quantize_cells(std::size_t levels);

}  // namespace calbench
