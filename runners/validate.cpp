// `calbench validate CONFIG`: every check `run` makes before computing (the config, the
// pre-flight, the targets solved) and the expanded cells printed; no truth is computed
// (docs/architecture.md).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "experiment/preflight.hpp"
#include "runners/command.hpp"
#include "scenarios/registry.hpp"

namespace calbench {

Command add_validate_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* validate = app.add_subcommand("validate", "check a config and print its expanded cells");
  validate->add_option("CONFIG", *file, "experiment config (JSON)")->required();
  return {validate, [file] {
            // Every check `run` makes before it computes (docs/config.md): the pre-flight for
            // the default --threads and the solving of targets.
            const auto config = load_experiment(*file);
            const ScenarioModule& scenario = module_of(*config);
            const std::size_t threads = default_threads();
            const std::vector<CellDemand> demands = cell_demands(*config);
            preflight(*config, demands, threads, available_memory_bytes());
            scenario.prepare(*config);
            std::cout << scenario.describe(*config);
            std::cout << "estimated time: up to about "
                      << duration_text(estimated_seconds(estimate_run(*config, demands), threads))
                      << " on " << threads << " threads (pre-flight, a rough upper estimate)\n";
            return 0;
          }};
}

}  // namespace calbench
