// `calbench validate CONFIG`: the config checked and its expanded cells printed; no target is
// solved and no truth computed (docs/architecture.md).
#include <iostream>
#include <memory>
#include <string>

#include "runners/command.hpp"
#include "scenarios/registry.hpp"

namespace calbench {

Command add_validate_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* validate = app.add_subcommand("validate", "check a config and print its expanded cells");
  validate->add_option("CONFIG", *file, "experiment config (JSON)")->required();
  return {validate, [file] {
            const auto config = load_experiment(*file);
            std::cout << module_of(*config).describe(*config);
            return 0;
          }};
}

}  // namespace calbench
