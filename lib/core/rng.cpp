#include "core/rng.hpp"

#include <array>
#include <boost/random/seed_seq.hpp>
#include <string>

namespace calbench {

Engine make_engine(const StreamKey& key) {
  auto lo = [](std::uint64_t v) { return static_cast<std::uint32_t>(v & 0xffffffffu); };
  auto hi = [](std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); };
  // The last word tags the key layout, so a future layout cannot collide with this one.
  const std::array<std::uint32_t, 8> words = {lo(key.seed),
                                              hi(key.seed),
                                              lo(key.cell),
                                              hi(key.cell),
                                              lo(key.replicate),
                                              hi(key.replicate),
                                              static_cast<std::uint32_t>(key.purpose),
                                              0x63616c31u /* "cal1" */};
  boost::random::seed_seq seq(words.begin(), words.end());
  std::array<std::uint32_t, 8> out{};
  seq.generate(out.begin(), out.end());
  std::uint64_t state[4];
  for (std::size_t i = 0; i < 4; ++i)
    state[i] = (static_cast<std::uint64_t>(out[2 * i + 1]) << 32) | out[2 * i];
  // All-zero is the one state xoshiro cannot leave; seed_seq makes it a 2^-256 event, but
  // a fixed non-zero word costs nothing.
  if ((state[0] | state[1] | state[2] | state[3]) == 0) state[0] = 0x9e3779b97f4a7c15ull;
  return Engine(state);
}

std::uint64_t hash64(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace calbench
