#pragma once
// The HTML report of a run (docs/python.md, "The HTML report"): `calbench run` writes its result
// files, then has the Python package render OUTDIR/report/index.html (python3 -m
// calbench.report OUTDIR); `calbench eval DATA --plot DIR` has it draw the model's reliability
// diagrams into DIR. The report is optional: without python3 or its packages the run prints one
// warning and succeeds.
//
// The interpreter: $CALBENCH_PYTHON, else the python3 this build was configured with
// (CMake's CALBENCH_PYTHON3, Debian's /usr/bin/python3 first), else python3 on PATH. It runs
// in isolated mode (`python3 -I`): the working directory, the user's site-packages and the
// PYTHON* variables are off the import path, so a numpy.py beside a config is never run. The
// package: this checkout's python/ goes first on sys.path when it exists (so a build finds its
// own package without scripts/setup.sh's .pth file), then $PYTHONPATH's absolute entries.
// $CALBENCH_NO_REPORT set to a non-empty value other than 0 skips the report like --no-report
// (the test suite sets it for the runs that do not check the report).
#include <filesystem>
#include <string>
#include <vector>

namespace calbench {

enum class ReportStatus { written, unavailable, failed };

struct ReportOutcome {
  ReportStatus status = ReportStatus::failed;
  std::string message;  // unavailable: why (one line); failed: the Python error's last lines
};

// Runs `python -I -B -c BOOTSTRAP PATH args...` where the bootstrap imports numpy, pandas,
// matplotlib and calbench.report (exit 3 naming a missing module) and calls
// calbench.report.main(args).
ReportOutcome run_report_module(const std::vector<std::string>& args);

// Renders DIR/report/index.html and prints its path unless `quiet`. Without python3 or its
// packages: one warning on stderr, and status 0 (the run still succeeds); a failure of the
// report itself is status 1, though every result file is complete. `options` go before the
// directory (--eval: eval's diagrams, written into DIR itself).
int write_report(const std::filesystem::path& dir, bool quiet,
                 std::vector<std::string> options = {});

// Whether $CALBENCH_NO_REPORT asks to skip reports.
bool reports_disabled_by_environment();

}  // namespace calbench
