#pragma once
// A real model's outputs for `calbench eval` (docs/eval.md): labels and K probabilities (or
// logits, turned into probabilities by a stable softmax) per row, read from CSV or NPY and
// checked. Every problem is an InputError naming the file and the line (CSV) or row (NPY).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "core/sample.hpp"

namespace calbench {

// A probability row is accepted when |sum_k p_k - 1| <= this (1e-6: the sum of float32
// probabilities is off by up to K 2^-24, 6e-6 for K = 100, so float32 NPY input needs the
// rows renormalised first; float64 sums are off by K 2^-53). The row is used as given.
inline constexpr double probability_sum_tolerance = 1e-6;

enum class ValueKind { probabilities, logits };

// CSV: one row per line, `label,v_0,...,v_{K-1}`, no header, K >= 2 from the first row.
// Numbers by strtod (the exact double of a shortest round-trip text); labels are integers
// 0 .. K-1. Empty lines at the end of the file are ignored, elsewhere they are errors.
Sample read_csv_outputs(const std::filesystem::path& file, ValueKind kind);

// NPY: `values` a 2-D C-order float64 or float32 array (n, K), `labels` a 1-D integer array (n)
// (or (n, 1)), little-endian (docs/eval.md says why calbench reads NPY itself).
Sample read_npy_outputs(const std::filesystem::path& values, const std::filesystem::path& labels,
                        ValueKind kind);

// Rows already in memory (n = labels.size() rows of `classes` values, row-major), checked like
// a file's: the messages name `values_name` or `labels_name` and the row (0-based). The NPY
// reader and the Python binding's estimate() use it.
Sample checked_outputs(const std::filesystem::path& values_name,
                       const std::filesystem::path& labels_name, std::size_t classes,
                       std::vector<double> values, std::span<const std::int64_t> labels,
                       ValueKind kind);

// DATA as `calbench eval` and `calbench fit` take it: an NPY pair when `labels` is given, else a
// CSV file (an NPY file without labels is an InputError saying so).
Sample read_model_outputs(const std::string& data, const std::string& labels, ValueKind kind);

// p = softmax(z), computed as exp(z - max z) / sum: no overflow, and the largest term is 1.
void softmax_in_place(double* row, std::size_t classes);

}  // namespace calbench
