#include "truth/population.hpp"

#include "core/rng.hpp"
#include "truth/monte_carlo_sampler.hpp"

namespace calbench {
namespace {

struct Buffers {
  Sample sample;
  GeneratorScratch scratch;
  EstimatorWorkspace workspace;
};

}  // namespace

std::vector<PopulationValue> population_values(const Generator& generator,
                                               std::span<const Estimator* const> estimators,
                                               std::uint64_t samples) {
  const std::size_t E = estimators.size(), G = population_groups;
  const std::uint64_t per_group = std::max<std::uint64_t>(samples / G, 1);
  const std::uint64_t key = hash64(generator.canonical_text() + "|population");
  // The estimator evaluated: itself, or its cheaper form with the same limit (kept alive
  // by `owned` through the parallel section).
  std::vector<std::shared_ptr<const Estimator>> owned(E);
  std::vector<const Estimator*> evaluated(E);
  for (std::size_t e = 0; e < E; ++e) {
    owned[e] = estimators[e]->population_estimator();
    evaluated[e] = owned[e] ? owned[e].get() : estimators[e];
  }

  std::vector<double> value(G * E);  // value[g * E + e]
  const mc::KeyedBatches streams{key, Purpose::truth, G};
  mc::for_each_batch<Buffers>(streams, [&](std::size_t g, Engine& engine, Buffers& buf) {
    generator.sample(engine, per_group, buf.sample, buf.scratch, /*keep_truth=*/true);
    for (std::size_t e = 0; e < E; ++e)
      value[g * E + e] = evaluated[e]->estimate(buf.sample, buf.workspace);
  });

  std::vector<PopulationValue> out(E);
  for (std::size_t e = 0; e < E; ++e) {
    const mc::BatchMean m = mc::batch_mean(value, E, e);
    out[e] = {m.value, m.error, per_group};
  }
  return out;
}

std::vector<PopulationValue> population_values(const DirichletGenerator& generator,
                                               std::span<const Estimator* const> estimators,
                                               std::uint64_t samples) {
  return population_values(Generator(generator.spec()), estimators, samples);
}

}  // namespace calbench
