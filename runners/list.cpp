// `calbench list [KIND | NAME]`: a summary of the registry tables, one kind in full or one entry (lib/report/listing.hpp) and the scenario table.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "report/listing.hpp"
#include "runners/command.hpp"
#include "scenarios/registry.hpp"

namespace calbench {

Command add_list_command(CLI::App& app) {
  auto kind = std::make_shared<std::string>();
  auto* list = app.add_subcommand("list", "print the registry: estimators, maps, families, ...");
  list->add_option("KIND", *kind,
                   "estimators | maps | families | scenarios | quantities | decisions | "
                   "recalibrators, or an entry's name; none: a summary of every kind");
  return {list, [kind] {
            std::vector<ScenarioEntry> scenarios;
            for (const auto& module : scenario_table())
              scenarios.push_back({std::string(module.syntax.name), std::string(module.summary)});
            std::cout << format_registry(*kind, scenarios);
            return 0;
          }};
}

}  // namespace calbench
