#pragma once
// `calbench fit DATA` (docs/fit.md): fits a dirichlet-family fake classifier to a real model's
// outputs and reports how well it matches; with --out, writes a runnable config using it.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace calbench {

struct FitOptions {
  std::string data;    // CSV, or NPY with `labels`
  std::string labels;  // NPY labels (required for NPY data)
  bool logits = false;
  bool renormalize = false;  // rounded probability rows divided by their sum
  std::string map = "auto";  // auto | identity | temperature | power
  std::string family = "auto";
  std::size_t components = 4;  // the most mixture components tried (1: a single Dirichlet)  // auto
                               // | dirichlet | beta_binary (beta_binary needs K = 2)
  std::uint64_t seed = 0;      // of the fake sample in the comparison and of the written config
  std::string out;             // a config file to write (estimator_bias on the fitted generator)
  bool json = false;
};

// Computes everything, then prints (and writes --out atomically): on an error nothing is written.
int run_fit(const FitOptions& options, std::ostream& out);

}  // namespace calbench
