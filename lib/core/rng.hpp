#pragma once
// Keyed random streams.
//
// Every random number in calbench comes from a stream named by what it computes:
// (seed, cell, replicate, purpose) for a run, (hash of a generator's canonical parameters,
// batch, purpose) for the truth engine. Never by thread, so results do not depend on the
// scheduling.
//
// Engine: xoshiro256++ (Blackman & Vigna 2021, "Scrambled linear pseudorandom number
// generators", ACM TOMS 47(4)), seeded through boost::random::seed_seq from the key's eight
// 32-bit words. Why this gives independent streams: seed_seq (the standard's algorithm, fixed
// across platforms) spreads the 256 key bits over the whole 256-bit state, so distinct keys
// give unrelated starting points on a single cycle of length 2^256 - 1. S streams of length L
// overlap with probability below S^2 L / 2^256: for 10^9 streams of 10^12 draws, 10^-47.
// xoshiro256++ passes BigCrush and PractRand to the terabytes tested by its authors.
//
// Written here (twenty lines) rather than taken from Boost.Random because Boost 1.74, the
// Debian version, has neither xoshiro nor a counter-based engine such as Philox, and its
// fastest good engine, mt19937_64, costs 4.5 % of a W1 run in its state refresh alone and
// more in cache traffic (2.5 kB of state against 32 bytes; docs/performance.md).
// The class models Boost's UniformRandomNumberGenerator, so Boost.Random's distributions
// (the ziggurat normal, for one) accept it.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace calbench {

class Xoshiro256pp {
 public:
  using result_type = std::uint64_t;
  static constexpr bool has_fixed_range = true;

  // The state must not be all zero; make_engine guarantees it.
  explicit Xoshiro256pp(const std::uint64_t (&state)[4])
      : s_{state[0], state[1], state[2], state[3]} {}
  // Move-only: a copied engine would replay its parent's draws, silently correlating two
  // computations that were meant to use different streams (nanobench's Rng does the same).
  Xoshiro256pp(const Xoshiro256pp&) = delete;
  Xoshiro256pp& operator=(const Xoshiro256pp&) = delete;
  Xoshiro256pp(Xoshiro256pp&&) noexcept = default;
  Xoshiro256pp& operator=(Xoshiro256pp&&) noexcept = default;

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // An engine that replays this one's draws from here on, for a caller that draws the same
  // numbers again on purpose instead of storing them (the leaderboard's resample weights). The
  // one deliberate copy: the name says what it is for.
  Xoshiro256pp replay() const { return Xoshiro256pp(s_); }

  friend bool operator==(const Xoshiro256pp&, const Xoshiro256pp&) = default;

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

using Engine = Xoshiro256pp;

// What a stream is used for; part of its key so that two uses never share draws. Every
// stream in calbench is keyed by one of these; the numbers are part of every key, hence of
// every result: never renumber one. The keys {seed word, cell, replicate, purpose}:
//
// | purpose   | seed word                          | cell  | replicate    | what it draws        |
// |-----------|------------------------------------|-------|--------------|----------------------|
// | sample    | run seed                           | cell  | r            | replicate r's sample |
// | fit       | run seed                           | cell  | r            | r's fit sample       |
// | test      | run seed                           | cell  | r            | r's test sample      |
// | bootstrap | run seed                           | cell  | r * 2^32 + b | bootstrap resample b |
// | labels    | run seed                           | cell  | r * 2^32 + b | consistency resample |
// | truth     | H(canonical)                       | group | 0            | truth engine (1)     |
// | truth     | H(canonical + "|population")       | group | 0            | population values (2)|
// | truth     | H(canonical + "|recalibration")    | 0     | 0            | recalibrated truth(3)|
// | truth     | H("target-solver|" + canonical)    | chunk | 0            | target solver (4)    |
// | truth     | H(canonical + "|reliability")      | group | 0            | reliability curve (6)|
// | truth     | H(canonical + "|stratified")       | batch | 0            | empirical truth (7)  |
// | decision  | H(canonical)                       | batch | 0            | decision values (5)  |
//
// H = hash64, canonical = the generator's canonical text. (1) truth/monte_carlo_sampler.hpp,
// (2) truth/population.cpp, (3) truth/composed_truth.cpp, (4) truth/target_solver.cpp,
// (5) decisions/decision_value.cpp, (6) truth/reliability_curve.cpp, (7) truth/empirical_truth.cpp;
// the resamples: estimators/uncertainty.hpp; `calbench plan` (plan/sample_size_plan.cpp) uses the
// sample, bootstrap and labels rows with cell 0 for every sample size it simulates (common random
// numbers across n). `split` is reserved for a fit/test split of given data; 3 and 9-11
// belonged to purposes since removed. The truth streams share a purpose and are told apart by the
// tag hashed into the seed word (a purpose each would be cleaner, but would change every truth
// value's bits).
enum class Purpose : std::uint32_t {
  sample = 1,
  truth = 2,
  bootstrap = 4,
  split = 5,
  labels = 6,
  fit = 7,
  test = 8,
  decision = 12,
};

struct StreamKey {
  std::uint64_t seed = 0;
  std::uint64_t cell = 0;
  std::uint64_t replicate = 0;
  Purpose purpose = Purpose::sample;
};

// A uniform draw on the open interval (0, 1) from the top 53 bits of one engine output:
// (k + 1/2) 2^-53 for k uniform on 0 .. 2^53 - 1. Written here because
// boost::random::uniform_01<double> spends 6 ns per draw in its generic integer-to-real
// conversion, against 1.5 ns for the engine itself, and uniforms are a third of a gamma draw;
// excluding 0 and 1 also keeps log(u) finite.
// The conversion goes through a signed integer: the value is below 2^53 either way, and
// without AVX-512 x86-64 converts only signed integers in one instruction (an unsigned one
// costs a test, a branch and several more instructions).
inline double uniform_open01(std::uint64_t bits) {
  return (static_cast<double>(static_cast<std::int64_t>(bits >> 11)) + 0.5) * 0x1.0p-53;
}
inline double uniform_open01(Engine& engine) {
  return uniform_open01(engine());
}

// Eight xoshiro256++ generators advanced together, for random bits in bulk: the samplers'
// hot loops (generators/gamma_sampler.cpp) take most of their uniforms from here. One scalar
// xoshiro256++ output costs about 3 cycles (its dozen integer operations); two groups of four
// lanes, each group in one 256-bit register (AVX2) or two 128-bit ones (SSE2), cost about a
// third of that per output (docs/performance.md). The lanes are seeded from 32 outputs of a
// parent stream, so
// each starts at an unrelated point of the same 2^256 - 1 cycle, by the argument of
// make_engine: the lanes are keyed streams in all but name. Integer operations only, so
// both compiled variants give the same bits.
class EngineLanes {
 public:
  static constexpr std::size_t kLanes = 8;
  explicit EngineLanes(Engine& parent);
  // out[0 .. n) for n a multiple of kLanes: lane l's outputs at out[kLanes t + l].
  void fill(std::uint64_t* out, std::size_t n);

 private:
  std::uint64_t s_[4][kLanes];  // s_[word][lane]
};

// A fresh engine for the key. Engines are move-only: pass them by reference.
Engine make_engine(const StreamKey& key);

// 64-bit FNV-1a of a string, for keys derived from canonical parameter text.
std::uint64_t hash64(const std::string& text);

}  // namespace calbench
