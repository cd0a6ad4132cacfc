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
  return Engine(seq);
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
