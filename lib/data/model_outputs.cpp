#include "data/model_outputs.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/read_file.hpp"
#include "data/npy.hpp"

namespace calbench {
namespace {

// Where a row came from, for messages: "FILE: line 7" (CSV) or "FILE: row 6" (NPY, 0-based).
struct RowPlace {
  const std::filesystem::path* file;
  const char* unit;
  std::size_t number;
  std::string text() const { return file->string() + ": " + unit + " " + std::to_string(number); }
};

[[noreturn]] void fail(const RowPlace& at, const std::string& what) {
  throw InputError(at.text() + ": " + what);
}

// Divides the row by its sum s: q_k = p_k / s.
void renormalise(double* row, std::size_t K, double sum) {
  for (std::size_t k = 0; k < K; ++k) row[k] /= sum;
}

// Checks one row of K values, converting logits to probabilities first. The hints are chosen
// so that following one can never give a silently wrong result: a row that looks like rounded
// probabilities (every entry in [0, 1], the sum within rounded_sum_tolerance(K) of 1) is never
// told to use --logits, whose softmax would turn probabilities into something else.
void check_row(double* row, std::size_t K, ValueFormat format, const RowPlace& at) {
  for (std::size_t k = 0; k < K; ++k)
    if (!std::isfinite(row[k]))
      fail(at,
           "value " + std::to_string(k + 1) + " is " + format_double(row[k]) + ": must be finite");
  if (format.kind == ValueKind::logits) {
    softmax_in_place(row, K);
    return;
  }
  double sum = 0.0;
  bool in_unit_interval = true;
  for (std::size_t k = 0; k < K; ++k) {
    if (row[k] < 0.0)
      fail(at, "probability " + std::to_string(k + 1) + " is " + format_double(row[k]) +
                   ": must be >= 0 (if the values are logits, use --logits)");
    in_unit_interval = in_unit_interval && row[k] <= 1.0;
    sum += row[k];
  }
  const double off = std::fabs(sum - 1.0);
  if (off <= probability_sum_tolerance) {
    if (format.renormalize) renormalise(row, K, sum);
    return;
  }
  const double rounded = rounded_sum_tolerance(K);
  const bool looks_rounded = in_unit_interval && off <= rounded;
  if (looks_rounded && format.renormalize) {
    renormalise(row, K, sum);
    return;
  }
  const std::string head = "probabilities sum to " + format_double(sum) + ": must be 1 within " +
                           format_double(probability_sum_tolerance);
  if (looks_rounded)
    fail(at, head + "; every entry is in [0, 1] and the sum is within " + format_double(rounded) +
                 " (K x " + format_double(rounded_entry_tolerance) +
                 ") of 1, as for probabilities rounded to a few decimals: --renormalize "
                 "(renormalize=True in Python) divides each row by its sum");
  if (!in_unit_interval)
    fail(at, head + ", and a probability is > 1 (if the values are logits, use --logits)");
  fail(at, head + " (or within " + format_double(rounded) +
               " with --renormalize): too far off for rounding, these are not probabilities");
}

std::uint32_t check_label(std::int64_t label, std::size_t K, const RowPlace& at) {
  if (label < 0 || static_cast<std::uint64_t>(label) >= K)
    fail(at, "label " + std::to_string(label) + " is out of range: must be 0 .. " +
                 std::to_string(K - 1) + " for " + std::to_string(K) + " classes");
  return static_cast<std::uint32_t>(label);
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

double parse_number(std::string_view field, std::size_t column, const RowPlace& at) {
  const std::string text(field);
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(begin, &end);
  if (text.empty() || end != begin + text.size() ||
      std::isspace(static_cast<unsigned char>(text[0])))
    fail(at, "field " + std::to_string(column + 1) + " \"" + text + "\" is not a number");
  return x;
}

bool is_number(std::string_view field) {
  if (field.empty() || std::isspace(static_cast<unsigned char>(field[0]))) return false;
  const std::string text(field);
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// A class index written as an integer ("3") or as a whole float ("3.0", "3e0"): numpy.savetxt
// writes a float array's labels as "3.000000000000000000e+00" by default.
std::int64_t parse_label(std::string_view field, const RowPlace& at) {
  const std::string text(field);
  const bool digits =
      !text.empty() && std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(),
                                   [](char ch) { return ch >= '0' && ch <= '9'; });
  if (digits && text != "-") {
    errno = 0;
    const long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) fail(at, "label \"" + text + "\" is out of range");
    return v;
  }
  // 2^53: beyond it not every whole double is an exact integer (and no K is that large).
  constexpr double largest_exact = 9007199254740992.0;
  if (is_number(text)) {
    errno = 0;
    const double x = std::strtod(text.c_str(), nullptr);
    // ERANGE: "1e-400" reads as 0 but is no whole number (found by tests/cli/fuzz_inputs.py).
    if (errno != ERANGE && std::isfinite(x) && x == std::floor(x) && std::fabs(x) <= largest_exact)
      return static_cast<std::int64_t>(x);
  }
  fail(at, "label \"" + text + "\" is not an integer class index (a whole number 0 .. K-1)");
}

// The first line, when it is a header: no field is a number (numpy.savetxt's header starts
// with "# "). A line of numbers is data; a mix is refused, since a header with numeric column
// names cannot be told from a malformed row.
bool is_header(const std::vector<std::string_view>& fields, const RowPlace& at) {
  std::size_t numbers = 0, first_number = 0;
  for (std::size_t j = 0; j < fields.size(); ++j) {
    std::string_view field = fields[j];
    if (j == 0)
      while (!field.empty() && (field.front() == '#' || field.front() == ' '))
        field.remove_prefix(1);
    if (is_number(field) && numbers++ == 0) first_number = j;
  }
  if (numbers == 0) return true;
  if (!is_number(fields[0]))
    fail(at, "field 1 \"" + std::string(fields[0]) + "\" is not a number but field " +
                 std::to_string(first_number + 1) + " \"" + std::string(fields[first_number]) +
                 "\" is: neither a data row nor a header (a header has no numeric field)");
  return false;
}

}  // namespace

double rounded_sum_tolerance(std::size_t classes) {
  return static_cast<double>(classes) * rounded_entry_tolerance;
}

void softmax_in_place(double* row, std::size_t classes) {
  const double top = *std::max_element(row, row + classes);
  double sum = 0.0;
  for (std::size_t k = 0; k < classes; ++k) {
    row[k] = std::exp(row[k] - top);
    sum += row[k];
  }
  for (std::size_t k = 0; k < classes; ++k) row[k] /= sum;
}

Sample read_csv_outputs(const std::filesystem::path& file, ValueFormat format) {
  return read_csv_rows(file, format, 0).sample;
}

namespace {

// A binary model's outputs given as P(y = 1) alone (issue #38): refused, since one number could
// as well be the top-label confidence; the message says how to write both columns.
constexpr std::string_view one_probability_column =
    "one probability per row: calbench needs every class's probability (for a binary model "
    "both P(y = 0) and P(y = 1) in two columns, e.g. with numpy: "
    "np.column_stack([1 - p1, p1]))";

}  // namespace

ModelOutputs read_csv_rows(const std::filesystem::path& file, ValueFormat format,
                           std::size_t unlabelled_classes) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw InputError(file.string() + ": cannot open the file (it is a directory)");
  // A FIFO would block the stream's open forever, /dev/zero would be read without end.
  if (const std::string special = special_file_kind(file); !special.empty())
    throw InputError(file.string() + ": cannot open the file (it is " + special +
                     ", not a regular file)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open the file (missing or unreadable)");
  std::vector<double> p;
  std::vector<std::uint32_t> labels;
  std::size_t K = 0, line_number = 0, blank_since = 0, header_fields = 0, header_line = 0,
              first_row = 0;
  bool labelled = true;
  std::string line;
  std::vector<double> row;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const RowPlace at{&file, "line", line_number};
    if (line.empty()) {
      if (blank_since == 0) blank_since = line_number;
      continue;
    }
    if (blank_since != 0) fail({&file, "line", blank_since}, "empty line inside the data");
    const auto fields = split(line);
    // A semicolon- or tab-separated file has one field per line: it read as a header, then
    // failed on its data with a message about fields (issue #38).
    if (fields.size() == 1)
      if (const auto separator = line.find_first_of(";\t"); separator != std::string::npos)
        fail(at, std::string("no comma but a ") + (line[separator] == ';' ? "semicolon" : "tab") +
                     ": calbench reads comma-separated values (convert the file, e.g. tr '" +
                     (line[separator] == ';' ? ";" : "\\t") + "' ',')");
    if (K == 0 && header_line == 0 && is_header(fields, at)) {
      header_line = line_number;
      header_fields = fields.size();
      continue;
    }
    if (K == 0 && header_line != 0 && fields.size() != header_fields)
      fail(at, "expected " + std::to_string(header_fields) + " fields, as in the header on line " +
                   std::to_string(header_line) + ", found " + std::to_string(fields.size()));
    if (K == 0) {
      // Rows of `unlabelled_classes` values have no label column; the first row decides.
      labelled = unlabelled_classes == 0 || fields.size() != unlabelled_classes;
      const std::size_t label_fields = labelled ? 1 : 0;
      if (unlabelled_classes != 0 && fields.size() != unlabelled_classes &&
          fields.size() != unlabelled_classes + 1)
        fail(at, "expected " + std::to_string(unlabelled_classes) +
                     " probabilities, or a label and " + std::to_string(unlabelled_classes) +
                     " probabilities (" + std::to_string(unlabelled_classes + 1) +
                     " fields), found " + std::to_string(fields.size()) + " field(s)");
      if (fields.size() == 1 + label_fields && label_fields == 1)
        fail(at, std::string(one_probability_column));
      if (fields.size() < 2 + label_fields)
        fail(at, "expected a label and at least 2 values, found " + std::to_string(fields.size()) +
                     " field(s)");
      K = fields.size() - label_fields;
      first_row = line_number;
    } else if (fields.size() != K + (labelled ? 1 : 0)) {
      fail(at, labelled
                   ? "expected " + std::to_string(K + 1) + " fields (a label and " +
                         std::to_string(K) + " values, as on line " + std::to_string(first_row) +
                         "), found " + std::to_string(fields.size())
                   : "expected " + std::to_string(K) + " fields (" + std::to_string(K) +
                         " probabilities without a label, as on line " + std::to_string(first_row) +
                         "), found " + std::to_string(fields.size()));
    }
    const std::size_t offset = labelled ? 1 : 0;
    const std::uint32_t y = labelled ? check_label(parse_label(fields[0], at), K, at) : 0;
    row.resize(K);
    for (std::size_t k = 0; k < K; ++k) row[k] = parse_number(fields[k + offset], k + offset, at);
    check_row(row.data(), K, format, at);
    p.insert(p.end(), row.begin(), row.end());
    labels.push_back(y);
  }
  if (in.bad()) throw InputError(file.string() + ": cannot read the file");
  if (labels.empty()) throw InputError(file.string() + ": the file has no data rows");
  return {make_sample(K, std::move(p), std::move(labels)), labelled};
}

Sample read_npy_outputs(const std::filesystem::path& values, const std::filesystem::path& labels,
                        ValueFormat format) {
  NpyArray v = read_npy(values);
  const NpyArray y = read_npy(labels);
  if (!v.is_float() || v.shape.size() != 2)
    throw InputError(values.string() + ": expected a 2-D float64 or float32 array (n, K), found " +
                     v.descr + " with " + std::to_string(v.shape.size()) + " dimension(s)");
  const std::size_t n = v.shape[0], K = v.shape[1];
  if (n == 0) throw InputError(values.string() + ": the array has no rows");
  if (K == 1) throw InputError(values.string() + ": K = 1: " + std::string(one_probability_column));
  if (K < 2) throw InputError(values.string() + ": K = " + std::to_string(K) + ": must be >= 2");
  const bool column = y.shape.size() == 2 && y.shape[1] == 1;
  if (y.is_float() || !(y.shape.size() == 1 || column))
    throw InputError(labels.string() + ": expected a 1-D integer array of labels, found " +
                     y.descr + " with " + std::to_string(y.shape.size()) + " dimension(s)");
  if (y.shape[0] != n)
    throw InputError(labels.string() + ": " + std::to_string(y.shape[0]) + " labels for " +
                     std::to_string(n) + " rows in " + values.string());
  return checked_outputs(values, labels, K, std::move(v.floats), y.ints, format);
}

Sample checked_outputs(const std::filesystem::path& values_name,
                       const std::filesystem::path& labels_name, std::size_t classes,
                       std::vector<double> values, std::span<const std::int64_t> labels,
                       ValueFormat format) {
  const std::size_t n = labels.size();
  std::vector<std::uint32_t> out_labels(n);
  for (std::size_t i = 0; i < n; ++i) {
    check_row(values.data() + i * classes, classes, format, {&values_name, "row", i});
    out_labels[i] = check_label(labels[i], classes, {&labels_name, "row", i});
  }
  return make_sample(classes, std::move(values), std::move(out_labels));
}

ModelOutputs read_outputs_maybe_unlabelled(const std::string& data, const std::string& labels,
                                           ValueFormat format, std::size_t classes) {
  if (!labels.empty()) return {read_npy_outputs(data, labels, format), true};
  if (data.size() >= 4 && data.compare(data.size() - 4, 4, ".npy") == 0) {
    NpyArray v = read_npy(data);
    if (!v.is_float() || v.shape.size() != 2)
      throw InputError(data + ": expected a 2-D float64 or float32 array (n, K), found " + v.descr +
                       " with " + std::to_string(v.shape.size()) + " dimension(s)");
    const std::size_t n = v.shape[0], K = v.shape[1];
    if (n == 0) throw InputError(data + ": the array has no rows");
    if (K != classes)
      throw InputError(data + ": K = " + std::to_string(K) + " columns, expected " +
                       std::to_string(classes));
    // Labels are not needed to apply a model; zeros pass the checks of the rows.
    const std::vector<std::int64_t> zeros(n, 0);
    return {checked_outputs(data, data, K, std::move(v.floats), zeros, format), false};
  }
  return read_csv_rows(data, format, classes);
}

Sample read_model_outputs(const std::string& data, const std::string& labels, ValueFormat format) {
  if (!labels.empty()) return read_npy_outputs(data, labels, format);
  if (data.size() >= 4 && data.compare(data.size() - 4, 4, ".npy") == 0)
    throw InputError(data + ": NPY data needs its labels: --labels LABELS.npy");
  return read_csv_outputs(data, format);
}

ZeroCount count_zeros(const Sample& sample) {
  ZeroCount out;
  const std::size_t K = sample.classes;
  for (std::size_t i = 0; i < sample.size; ++i) {
    out.true_label_zeros += sample.p[i * K + sample.label[i]] == 0.0;
    for (std::size_t k = 0; k < K; ++k) out.zeros += sample.p[i * K + k] == 0.0;
  }
  // The fewest decimals on whose grid every value lies: strtod gives the double nearest to
  // the text, so v 10^d is an integer up to a few units of 10^-16 v 10^d; 1e-7 is far above
  // that and far below a grid step (a full-precision value passes a 9-decimal grid by chance
  // with probability 2e-7 per value).
  const auto on_grid = [&](int d) {
    const double scale = std::pow(10.0, d);
    return std::all_of(sample.p.begin(), sample.p.end(), [&](double v) {
      const double scaled = v * scale;
      return std::abs(scaled - std::round(scaled)) <= 1e-7 * std::max(1.0, scaled);
    });
  };
  for (int d = 1; d <= 9 && !out.decimals; ++d)
    if (on_grid(d)) out.decimals = d;
  return out;
}

std::vector<std::size_t> absent_classes(const Sample& sample) {
  std::vector<bool> seen(sample.classes, false);
  for (const auto y : sample.label) seen[y] = true;
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < sample.classes; ++k)
    if (!seen[k]) out.push_back(k);
  return out;
}

std::string describe_label_zeros(const ZeroCount& zeros, std::size_t rows) {
  if (zeros.true_label_zeros == 0) return "";
  std::string out = std::to_string(zeros.true_label_zeros) + " of " + std::to_string(rows) +
                    (zeros.true_label_zeros == 1 ? " rows gives its" : " rows give their") +
                    " label probability exactly 0";
  if (zeros.decimals)
    out += " (every value is rounded to " + std::to_string(*zeros.decimals) +
           (*zeros.decimals == 1 ? " decimal)" : " decimals)");
  return out;
}

}  // namespace calbench
