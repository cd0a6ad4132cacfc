#pragma once
// n rows of a generator on the stream {seed, cell, replicate, sample}: the sample the fit tests
// fit to (replicate 0), or a replicate's.
#include <cstddef>
#include <cstdint>

#include "core/rng.hpp"
#include "core/sample.hpp"
#include "generators/generator.hpp"

namespace calbench::testing {

inline Sample draw(const GeneratorSpec& spec, std::size_t n, std::uint64_t seed,
                   bool keep_truth = false, std::uint64_t cell = 0, std::uint64_t replicate = 0) {
  const Generator generator(spec);
  Sample out;
  GeneratorScratch scratch;
  Engine engine = make_engine({seed, cell, replicate, Purpose::sample});
  generator.sample(engine, n, out, scratch, keep_truth);
  return out;
}

}  // namespace calbench::testing
