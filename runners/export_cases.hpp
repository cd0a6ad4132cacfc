#pragma once
// `calbench export-cases DIR`: small edge-case data sets (exact 0 and 1, ties, bin edges, an
// empty class, n = 1) with every registry estimator's value under every binning convention and
// the plug-in truth, for other implementations' test suites (docs/cases.md).
#include <filesystem>
#include <ostream>

namespace calbench {

// Writes the cases into `directory` (which must not exist or be empty): one folder per case
// with p.npy and y.npy, and cases.json. Everything is written under a temporary name and
// renamed at the end. Returns 0; an existing non-empty directory is an InputError.
int run_export_cases(const std::filesystem::path& directory, std::ostream& out);

}  // namespace calbench
