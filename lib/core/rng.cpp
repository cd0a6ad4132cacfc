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

// The same steps as Xoshiro256pp::operator(), on all lanes at once: a GCC/Clang vector type
// (GCC does not vectorise the lane loop by itself), which the AVX2 clone keeps in one
// register per state word and the default clone in two SSE2 registers.
__attribute__((target_clones("avx2", "default"))) void EngineLanes::fill(std::uint64_t* out,
                                                                         std::size_t n) {
  using Lanes = std::uint64_t __attribute__((vector_size(8 * kLanes)));
  Lanes s0, s1, s2, s3;
  std::memcpy(&s0, s_[0], sizeof s0);
  std::memcpy(&s1, s_[1], sizeof s1);
  std::memcpy(&s2, s_[2], sizeof s2);
  std::memcpy(&s3, s_[3], sizeof s3);
  for (std::size_t t = 0; t < n; t += kLanes) {
    const Lanes sum = s0 + s3;
    const Lanes result = ((sum << 23) | (sum >> 41)) + s0;
    std::memcpy(out + t, &result, sizeof result);
    const Lanes shifted = s1 << 17;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= shifted;
    s3 = (s3 << 45) | (s3 >> 19);
  }
  std::memcpy(s_[0], &s0, sizeof s0);
  std::memcpy(s_[1], &s1, sizeof s1);
  std::memcpy(s_[2], &s2, sizeof s2);
  std::memcpy(s_[3], &s3, sizeof s3);
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
