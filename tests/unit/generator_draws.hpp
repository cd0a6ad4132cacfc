#pragma once
// n rows of a generator on the stream {seed, cell, 0, sample}: the sample the fit tests fit to.
#include <cstddef>
#include <cstdint>

#include "core/rng.hpp"
#include "core/sample.hpp"
#include "generators/generator.hpp"

namespace calbench::testing {

inline Sample draw(const GeneratorSpec& spec, std::size_t n, std::uint64_t seed,
                   bool keep_truth = false, std::uint64_t cell = 0) {
  const Generator generator(spec);
  Sample out;
  GeneratorScratch scratch;
  Engine engine = make_engine({seed, cell, 0, Purpose::sample});
  generator.sample(engine, n, out, scratch, keep_truth);
  return out;
}

}  // namespace calbench::testing
