#pragma once
// A subcommand of `calbench`. Each declares itself beside its body: `add_NAME_command(app)` in
// runners/NAME.cpp adds its options to the CLI11 app and returns the body main() runs when the
// command line chose it, so main() reads as the table of contents of the command line.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/json_support.hpp"
#include "report/result_record.hpp"

namespace calbench {

struct Command {
  CLI::App* app = nullptr;    // the subcommand, parsed by CLI11
  std::function<int()> body;  // runs it; returns the exit status
};

// Runs the body of the command the command line chose. The library throws and never exits:
// here its errors become exit statuses, 2 for bad input (each problem of a ConfigError on its
// own line; InputError; NumericalError) and 1 for anything else.
int run_chosen(const std::vector<Command>& commands);

// ---- what the subcommands share --------------------------------------------------------------

// Worker threads when no --threads is given: every core TBB sees.
std::size_t default_threads();
// --threads: in [1, 4096].
CLI::Validator thread_range();
// An unsigned 64-bit integer, range-checked on its text: CLI11 would otherwise read "-1" into
// an unsigned option as 2^64 - 1.
CLI::Validator uint64_text();
// A directory option (--out, --plot): must not be empty.
CLI::Validator directory_text();
// A command's `--out PATH` result document (plan, gate): finite (a NaN is a NumericalError
// naming PATH and the pointer) and written whole or not at all; a place the user cannot write
// is bad input (exit 2), not a crash.
void write_result_json(const std::string& path, const Json& doc);

// What a command says of a file or directory it wrote, the line's end included: "wrote PATH\n",
// or with `detail` "wrote PATH (DETAIL)\n".
std::string wrote(const std::string& path, const std::string& detail = {});
// A warning on stderr from `who` ("calbench", "calbench eval"): "WHO: warning: TEXT".
void warn(std::string_view who, const std::string& text);
// A document's members as the header blocks of a JSON reporter's stream (a command's --json).
ReportHeader document_header(const Json& document);

// The commands, each in runners/NAME.cpp.
Command add_run_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_slurm_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_list_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_eval_command(CLI::App& app);
Command add_fit_command(CLI::App& app);
Command add_plan_command(CLI::App& app);
Command add_gate_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_export_cases_command(CLI::App& app);
Command add_recalibrate_command(CLI::App& app);

}  // namespace calbench
