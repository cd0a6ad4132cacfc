// The `calbench` command line: the table of its subcommands, each declared beside its body
// (`add_NAME_command` in runners/NAME.cpp, runners/command.hpp).
// Exit status: 0 success, 2 bad input (config, data, usage), 1 anything else.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/version.hpp"
#include "runners/command.hpp"

int main(int argc, char** argv) {
  using namespace calbench;
  CLI::App app{
      "calbench: fake classifiers with known calibration, for benchmarking calibration "
      "metrics, recalibration and decisions"};
  app.set_version_flag("--version", std::string("calbench ") + version + " (" + git_revision + ")");
  app.require_subcommand(1);
  const std::vector<Command> commands = {
      add_run_command(app),      add_merge_command(app),        add_slurm_command(app),
      add_validate_command(app), add_list_command(app),         add_bench_command(app),
      add_eval_command(app),     add_fit_command(app),          add_plan_command(app),
      add_check_command(app),    add_export_cases_command(app), add_recalibrate_command(app),
      add_gate_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return run_chosen(commands);
}
