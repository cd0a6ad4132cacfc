#pragma once
// `calbench gate GATE.json` (docs/gates.md): what an acceptance gate such as "15-bin ECE <= 0.08
// on n = 100" risks — its operating characteristic P(pass) over a family of fakes indexed by the
// true calibration error, and the false-reject and false-accept rates at a good and a bad one.
// A one-clause gate can be written as options instead of a file.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace calbench {

// The one-clause gate of the options: the gate document they stand for (docs/gates.md).
struct GateClauseOptions {
  std::string generator;  // a generator config (`calbench fit --out`), relative to the cwd
  std::string estimator;  // a registry name ("ece") or an estimator object as JSON text
  std::optional<double> at_most, at_least;
  std::optional<long long> n;
  std::vector<double> values;
  std::optional<double> good, bad;
  std::optional<long long> replicates;
  std::optional<unsigned long long> seed;
  std::string quantity;  // empty: the default (ece)
};

struct GateOptions {
  std::string file;  // the gate file, or empty for the options' gate
  GateClauseOptions clause;
  std::string out;     // the result file to write (atomically), or empty
  bool quiet = false;  // no progress lines on stderr
};

// Computes everything, then prints the table (and writes --out): on an error nothing is written.
int run_gate(const GateOptions& options, std::ostream& out);

}  // namespace calbench
