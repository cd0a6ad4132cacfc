#pragma once
// A real model's outputs for `calbench eval` (docs/eval.md): labels and K probabilities (or
// logits, turned into probabilities by a stable softmax) per row, read from CSV or NPY and
// checked. Every problem is an InputError naming the file and the line (CSV) or row (NPY).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace calbench {

// A probability row is accepted as given when |sum_k p_k - 1| <= this (1e-6: the sum of
// float32 probabilities is off by up to K 2^-24, 6e-6 for K = 100; float64 sums are off by
// K 2^-53). The row is used as given.
inline constexpr double probability_sum_tolerance = 1e-6;

// A row of probabilities each rounded to 3 or more decimals is off from its true value by at
// most half a unit of the third decimal per entry, so its sum is within K * 5e-4 of 1. Such a
// row is a *rounded probability row*: refused (with a hint to --renormalize) unless the user
// asks for renormalisation, never taken for logits.
inline constexpr double rounded_entry_tolerance = 5e-4;
double rounded_sum_tolerance(std::size_t classes);

enum class ValueKind { probabilities, logits };

// How the values of a row are read: probabilities or logits, and whether probability rows
// are divided by their sum (`--renormalize`, `renormalize=True` in Python). Renormalisation
// accepts only rows with every entry in [0, 1] and a sum within rounded_sum_tolerance(K) of 1:
// anything further off is not a rounding error and stays an error.
struct ValueFormat {
  ValueKind kind = ValueKind::probabilities;
  bool renormalize = false;
};

// CSV: one row per line, `label,v_0,...,v_{K-1}`, K >= 2 from the first row, with an optional
// header line: a first line none of whose fields is a number (a leading "# ", as numpy.savetxt
// writes its header, is allowed), with as many fields as the rows. Numbers by strtod (the
// exact double of a shortest round-trip text); labels are class indices 0 .. K-1 written as
// integers or as whole floats ("3", "3.0", "3.000000000000000000e+00", numpy.savetxt's
// default). Empty lines at the end of the file are ignored, elsewhere they are errors.
Sample read_csv_outputs(const std::filesystem::path& file, ValueFormat format);

// Outputs that may come without labels (`calbench recalibrate apply`): the rows, and whether
// the data had a label column (when not, every label in `sample` is 0 and means nothing).
struct ModelOutputs {
  Sample sample;
  bool labelled = true;
};

// read_csv_outputs, or, when unlabelled_classes = K > 0 and the first data row has K fields,
// rows of K probabilities without a label column (every row then has K fields).
ModelOutputs read_csv_rows(const std::filesystem::path& file, ValueFormat format,
                           std::size_t unlabelled_classes);

// NPY: `values` a 2-D (C- or Fortran-order) float64 or float32 array (n, K), `labels` a 1-D integer
// array (n) (or (n, 1)), little-endian (docs/eval.md says why calbench reads NPY itself).
Sample read_npy_outputs(const std::filesystem::path& values, const std::filesystem::path& labels,
                        ValueFormat format);

// Rows already in memory (n = labels.size() rows of `classes` values, row-major), checked like
// a file's: the messages name `values_name` or `labels_name` and the row (0-based). The NPY
// reader and the Python binding's estimate() use it.
Sample checked_outputs(const std::filesystem::path& values_name,
                       const std::filesystem::path& labels_name, std::size_t classes,
                       std::vector<double> values, std::span<const std::int64_t> labels,
                       ValueFormat format);

// DATA as `calbench eval` and `calbench fit` take it: an NPY pair when `labels` is given, else a
// CSV file (an NPY file without labels is an InputError saying so).
Sample read_model_outputs(const std::string& data, const std::string& labels, ValueFormat format);

// DATA for a model of `classes` classes, with or without labels: as read_model_outputs, and
// also a CSV of `classes` probabilities per line or an NPY values file without --labels.
ModelOutputs read_outputs_maybe_unlabelled(const std::string& data, const std::string& labels,
                                           ValueFormat format, std::size_t classes);

// What rounding (or a softmax that underflowed) left as exact zeros (docs/eval.md, "Rounded
// probabilities"): the rows whose true class has probability exactly 0, where -log p_y is +inf
// and an NLL is not estimable; all zero entries; and the decimals d in 1..9 such that every
// value is a multiple of 10^-d within 1e-7 of its magnitude (nullopt when there is none: values
// with full precision).
struct ZeroCount {
  std::size_t true_label_zeros = 0;
  std::size_t zeros = 0;
  std::optional<int> decimals;
};
ZeroCount count_zeros(const Sample& sample);

// The classes no label names, in order (eval and recalibrate fit warn of them).
std::vector<std::size_t> absent_classes(const Sample& sample);

// The fact for a warning when true_label_zeros > 0, e.g. "636 of 10000 rows give their label
// probability exactly 0 (every value is rounded to 4 decimals)"; else "". The caller says what
// it means for its result.
std::string describe_label_zeros(const ZeroCount& zeros, std::size_t rows);

// What to do about it, for every such warning.
inline constexpr const char* full_precision_advice =
    "save probabilities with %.17g or as NPY to keep them exact (docs/eval.md)";

// p = softmax(z), computed as exp(z - max z) / sum: no overflow, and the largest term is 1.
void softmax_in_place(double* row, std::size_t classes);

}  // namespace calbench
