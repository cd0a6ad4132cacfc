#pragma once
// Keyed random streams.
//
// Every random number in calbench comes from a stream named by what it computes:
// (seed, cell, replicate, purpose) for a run, (hash of a generator's canonical parameters,
// batch, purpose) for the truth engine. Never by thread, so results do not depend on the
// scheduling.
//
// Engine: boost::random::mt19937_64, seeded through boost::random::seed_seq from the key's
// eight 32-bit words. Why this gives independent streams: seed_seq (the standard's
// algorithm, fixed across platforms) spreads the 256 key bits over the whole 19,968-bit state,
// so distinct keys give unrelated starting points on a period of 2^19937 - 1. S streams of
// length L overlap with probability about S^2 L / 2^19937: never, for any run we can make.
// (Boost 1.74, the Debian version, has no counter-based engine such as Philox; MT19937-64 is
// the fastest well-tested engine it ships and passes BigCrush but for its linear tests.)
// Seeding costs a few microseconds, against milliseconds of work per stream.
#include <boost/random/mersenne_twister.hpp>
#include <cstdint>

namespace calbench {

using Engine = boost::random::mt19937_64;

// What a stream is used for; part of its key so that two uses never share draws.
enum class Purpose : std::uint32_t {
  sample = 1,  // a replicate's fake-classifier sample
  truth = 2,   // the truth engine's Monte Carlo
  bootstrap = 4,
  split = 5,
  labels = 6,
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
inline double uniform_open01(Engine& engine) {
  return (static_cast<double>(engine() >> 11) + 0.5) * 0x1.0p-53;
}

// A fresh engine for the key. Engines are move-only in spirit: pass them by reference.
Engine make_engine(const StreamKey& key);

// 64-bit FNV-1a of a string, for keys derived from canonical parameter text.
std::uint64_t hash64(const std::string& text);

}  // namespace calbench
