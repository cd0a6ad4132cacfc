#include "core/rng.hpp"

#include <array>
#include <boost/random/seed_seq.hpp>
#include <cstring>
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

EngineLanes::EngineLanes(Engine& parent) {
  for (std::size_t l = 0; l < kLanes; ++l) {
    std::uint64_t any = 0;
    for (std::size_t w = 0; w < 4; ++w) any |= s_[w][l] = parent();
    if (any == 0) s_[0][l] = 0x9e3779b97f4a7c15ull;  // a 2^-256 event, as in make_engine
  }
}

// The same steps as Xoshiro256pp::operator(), on all lanes at once: GCC/Clang vector types
// of four lanes (GCC does not vectorise the lane loop by itself, and splits wider vector
// types badly), which the AVX2 clone keeps in one register per state word and the default
// clone in two SSE2 registers. Two groups of four lanes step side by side because one
// group's step is a chain of dependent operations: two chains fill the pipeline (0.53 ns per
// word with one group, 0.3 with two, on this project's machine).
__attribute__((target_clones("avx2", "default"))) void EngineLanes::fill(std::uint64_t* out,
                                                                         std::size_t n) {
  constexpr std::size_t G = kLanes / 2;  // lanes per group
  using Group = std::uint64_t __attribute__((vector_size(8 * G)));
  Group s[2][4];
  for (std::size_t g = 0; g < 2; ++g)
    for (std::size_t w = 0; w < 4; ++w) std::memcpy(&s[g][w], &s_[w][g * G], sizeof(Group));
  for (std::size_t t = 0; t < n; t += kLanes) {
    for (std::size_t g = 0; g < 2; ++g) {
      Group& s0 = s[g][0];
      Group& s1 = s[g][1];
      Group& s2 = s[g][2];
      Group& s3 = s[g][3];
      const Group sum = s0 + s3;
      const Group result = ((sum << 23) | (sum >> 41)) + s0;
      std::memcpy(out + t + g * G, &result, sizeof result);
      const Group shifted = s1 << 17;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= shifted;
      s3 = (s3 << 45) | (s3 >> 19);
    }
  }
  for (std::size_t g = 0; g < 2; ++g)
    for (std::size_t w = 0; w < 4; ++w) std::memcpy(&s_[w][g * G], &s[g][w], sizeof(Group));
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
