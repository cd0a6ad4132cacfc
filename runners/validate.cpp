// `calbench validate CONFIG`: every check `run` makes before computing (the config, the
// pre-flight, the targets solved) and the expanded cells printed; no truth is computed
// (docs/architecture.md).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "experiment/preflight.hpp"
#include "runners/command.hpp"
#include "runners/progress.hpp"
#include "scenarios/registry.hpp"

namespace calbench {

Command add_validate_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto long_run = std::make_shared<bool>(false);
  auto workers = std::make_shared<std::size_t>(default_threads());
  auto* validate = app.add_subcommand("validate", "check a config and print its expanded cells");
  validate->add_option("CONFIG", *file, "experiment config (JSON)")->required();
  validate
      ->add_option("--threads", *workers,
                   "the pre-flight's worker threads, as `calbench run --threads` (default: "
                   "all cores)")
      ->check(thread_range());
  validate->add_flag("--long", *long_run,
                     "accept a run estimated above a day, as `calbench run --long` does");
  return {validate, [file, long_run, workers] {
            // Every check `run` makes before it computes (docs/config.md): the pre-flight for
            // --threads (default: all cores) and the solving of targets.
            const auto config = load_experiment(*file);
            const ScenarioModule& scenario = module_of(*config);
            const std::size_t threads = *workers;
            const std::vector<CellDemand> demands = cell_demands(*config);
            preflight(*config, demands, threads, available_memory_bytes());
            const double seconds = estimated_seconds(estimate_run(*config, demands), threads);
            check_run_time(*config, demands, seconds, threads, *long_run);
            {
              Progress solving("validate: solving the generators' targets", true,
                               target_progress_style());
              scenario.prepare(*config, [&](std::size_t done, std::size_t total) {
                solving.update(done, total);
              });
              solving.finish();
            }
            std::cout << scenario.describe(*config);
            std::cout << "estimated time: up to about " << duration_text(seconds) << " on "
                      << threads << " threads (pre-flight, a rough upper estimate)\n";
            return 0;
          }};
}

}  // namespace calbench
