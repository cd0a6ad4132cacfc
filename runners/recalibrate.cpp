#include "runners/recalibrate.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "data/model_outputs.hpp"
#include "data/npy.hpp"
#include "experiment/preflight.hpp"
#include "recalibrators/fitted_model_json.hpp"
#include "report/columns.hpp"
#include "report/reporter.hpp"
#include "report/result_set.hpp"
#include "report/text_report.hpp"
#include "runners/command.hpp"

namespace calbench {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Sample read_data(const RecalibrateOptions& o) {
  return read_model_outputs(o.data, o.labels,
                            {.kind = o.logits ? ValueKind::logits : ValueKind::probabilities,
                             .renormalize = o.renormalize});
}

void data_options(CLI::App& command, RecalibrateOptions& o) {
  command.add_option("--labels", o.labels, "NPY array of integer labels (NPY data)");
  auto* logits = command.add_flag("--logits", o.logits, "the values are logits (softmax applied)");
  // Logits have no row sum to restore: the two together are a mistake, refused (exit 2).
  command
      .add_flag("--renormalize", o.renormalize,
                "divide each probability row by its sum (rows rounded to >= 3 decimals)")
      ->excludes(logits);
}

// A class that never occurs among the labels: a method fitted without it learns nothing about
// it (a class-sorted file split in halves gave vector scaling accuracy 0.461 instead of 0.966 on
// the other half), so `recalibrate fit` warns; and label probabilities of exactly 0.
void warn_about_data(const RecalibrateOptions& o, const Sample& sample) {
  constexpr std::string_view who = "calbench recalibrate fit";
  const auto absent = absent_classes(sample);
  if (!absent.empty()) {
    std::string list;
    for (std::size_t j = 0; j < absent.size() && j < 10; ++j)
      list += (j ? ", " : "") + std::to_string(absent[j]);
    if (absent.size() > 10) list += ", ...";
    warn(who, o.data + ": " + std::to_string(absent.size()) + " of " +
                  std::to_string(sample.classes) + " classes never occur among the " +
                  std::to_string(sample.size) + " labels (" + list +
                  "): the method learns nothing about them; fit on rows drawn from every class "
                  "(a shuffled split, not a sorted file cut in two)");
  }
  const ZeroCount zeros = count_zeros(sample);
  if (zeros.true_label_zeros > 0)
    warn(who, o.data + ": " + describe_label_zeros(zeros, sample.size) +
                  ": a method fitted on log p sees them at the floor " + format_double(zero_floor) +
                  ", which moves its fit (docs/recalibration.md, \"Exact zeros\"); " +
                  full_precision_advice);
}

// A fitted parameter, "name = value" (the shortest text that reads back as the same double),
// one a line under the fit.
const std::vector<ColumnSpec<FittedValue>> parameter_columns = {
    {"",
     [](const FittedValue& v) { return Value(v.name + " = " + format_double(v.value)); },
     show::terminal,
     {.align = Align::left}}};

int run_fit(const RecalibrateOptions& o, std::ostream& out) {
  // Before the fit: a directory or an unwritable place is bad input (exit 2), not a failure
  // after the work (issue #38, D16).
  check_writable(o.out, "--out " + o.out);
  const Json method = method_spec(o.method, "--method");
  const Sample sample = read_data(o);
  warn_about_data(o, sample);
  FittedModel fitted;
  try {
    fitted = fit_model(method, "--method", sample);
  } catch (const DomainError& error) {
    throw InputError(o.data + ": cannot fit " + quote(method.value("name", o.method)) + ": " +
                     error.what());
  }
  const Json document = fitted_model_json(fitted);
  write_file_atomically(o.out, document.dump(2) + "\n");
  if (o.json) {
    // The model file's blocks, as written, through the JSON reporter.
    JsonReporter json(out);
    emit(json, document_header(document), {});
    return 0;
  }
  std::string caption = "fitted " + fitted.label + " on " + std::to_string(fitted.fit_rows) +
                        " rows, K = " + std::to_string(fitted.classes) + '\n';
  if (fitted.zeros_raised > 0)
    caption += "  (" + std::to_string(fitted.zeros_raised) +
               " probabilities of exactly 0 raised to " + format_double(zero_floor) +
               ", as apply raises them; docs/recalibration.md)\n";
  TextReport report;
  report.table(caption, "parameters", parameter_columns, fitted.model->parameters(),
               "model: " + o.out + '\n', {.gap = " "});
  TerminalReporter terminal(out);
  report.emit(terminal);
  return 0;
}

// The calibrated rows as CSV: a header line, then the label and K probabilities per row, in
// the layout eval, fit and recalibrate read (and pandas.read_csv with no options).
// Unlabelled data give the K probabilities alone (header p_0,...).
std::string calibrated_csv(const Sample& sample, bool labelled, const std::vector<double>& q) {
  const std::size_t K = sample.classes;
  std::string text = labelled ? "label," : "";
  for (std::size_t k = 0; k < K; ++k) {
    if (k > 0) text += ',';
    text += "p_";
    text += std::to_string(k);
  }
  text += '\n';
  for (std::size_t i = 0; i < sample.size; ++i) {
    if (labelled) {
      text += std::to_string(sample.label[i]);
      text += ',';
    }
    for (std::size_t k = 0; k < K; ++k) {
      if (k > 0) text += ',';
      text += format_double(q[i * K + k]);
    }
    text += '\n';
  }
  return text;
}

// What apply holds at most per value of the data: the rows and the calibrated rows as doubles,
// and a third copy (the rows with exact zeros raised, or the bytes of an NPY file while it is
// read); a CSV output's text adds up to 25 bytes a value (the shortest round-trip text of a
// double and its comma) beside the first two. Per row: the labels (as read and as kept), the
// confidence and the predicted class, at most 4 numbers of 8 bytes.
constexpr double apply_bytes_per_value = 3.0 * sizeof(double);
constexpr double csv_text_bytes_per_value = 25.0;
constexpr double apply_bytes_per_row = 4.0 * sizeof(double);

// NPY data whose values would not fit in the memory available (or an address-space limit) is
// refused before it is read, from its header's shape (issue #38: 2 GB of rows reached 4.8 GB
// of memory). A CSV file's rows are not counted before reading; docs/recalibration.md.
void check_apply_memory(const RecalibrateOptions& o, bool npy_out) {
  if (!ends_with(o.data, ".npy")) return;
  const NpyShape npy = read_npy_shape(o.data);
  if (npy.shape.size() != 2) return;  // the reader says what is wrong with it
  const double rows = static_cast<double>(npy.shape[0]), K = static_cast<double>(npy.shape[1]);
  const double needed =
      rows * K *
          std::max(apply_bytes_per_value,
                   npy_out ? 0.0 : 2.0 * sizeof(double) + csv_text_bytes_per_value) +
      rows * apply_bytes_per_row;
  const double available = available_memory_bytes();
  if (needed > available)
    throw InputError(
        o.data + ": applying the model to its " + std::to_string(npy.shape[0]) + " rows x " +
        std::to_string(npy.shape[1]) + " classes needs about " + gigabytes(needed) +
        " of memory (the rows, the calibrated rows and a copy, 8 bytes a value " + "each" +
        (npy_out ? "" : ", and the CSV text") + ", and the labels) but " + gigabytes(available) +
        " are available; apply the model to the rows in parts (numpy.array_split) "
        "or where more memory is free");
}

int run_apply(const RecalibrateOptions& o, std::ostream& out) {
  const bool npy = ends_with(o.out, ".npy");
  if (!npy && !ends_with(o.out, ".csv"))
    throw InputError("--out " + o.out + ": expected a .csv or .npy file name");
  check_writable(o.out, "--out " + o.out);
  const FittedModel fitted = read_fitted_model_file(o.model);
  check_apply_memory(o, npy);
  const ModelOutputs data = read_outputs_maybe_unlabelled(
      o.data, o.labels,
      {.kind = o.logits ? ValueKind::logits : ValueKind::probabilities,
       .renormalize = o.renormalize},
      fitted.classes);
  const Sample& sample = data.sample;
  const std::vector<double> q = apply_fitted_model(fitted, sample.p, sample.classes, o.data);
  if (npy) {
    try {
      write_npy(o.out, {sample.size, sample.classes}, std::span<const double>(q));
    } catch (const std::runtime_error& error) {
      throw OutputError(error.what());
    }
  } else
    write_file_atomically(o.out, calibrated_csv(sample, data.labelled, q));
  out << "applied " << fitted.label << " (" << o.model << ") to " << sample.size
      << " rows: " << o.out << '\n';
  return 0;
}

}  // namespace

// Declares `recalibrate` with its `fit` and `apply` subcommands (runners/command.hpp).
Command add_recalibrate_command(CLI::App& app) {
  auto options = std::make_shared<RecalibrateOptions>();
  RecalibrateOptions& o = *options;
  auto* recalibrate = app.add_subcommand(
      "recalibrate", "fit a recalibration method on a model's outputs, apply it to new outputs");
  recalibrate->require_subcommand(1);
  auto* fit = recalibrate->add_subcommand(
      "fit", "fit a method on DATA and save the fitted model (docs/recalibration.md)");
  fit->add_option("DATA", o.data, "CSV (label, K probabilities per line) or NPY with --labels")
      ->required();
  data_options(*fit, o);
  fit->add_option("--method", o.method,
                  "a registry name (temperature) or a method object like a config's "
                  "methods entry ('{\"name\": \"histogram_binning\", \"bins\": 10}')")
      ->required();
  fit->add_option("--out", o.out, "the fitted model file (JSON)")->required();
  fit->add_flag("--json", o.json, "print the fitted model file");
  auto* apply = recalibrate->add_subcommand(
      "apply", "apply a fitted model to DATA and write the calibrated probabilities");
  apply->add_option("MODEL", o.model, "a file written by `calbench recalibrate fit`")->required();
  apply
      ->add_option("DATA", o.data,
                   "CSV (K probabilities per line, with or without a label first) or NPY (n, K), "
                   "--labels optional")
      ->required();
  data_options(*apply, o);
  apply
      ->add_option("--out", o.out,
                   ".csv (a header, then the label if DATA had one and K calibrated "
                   "probabilities per line) or .npy ((n, K) float64)")
      ->required();
  return {recalibrate,
          [recalibrate, options] { return run_recalibrate(*recalibrate, *options, std::cout); }};
}

int run_recalibrate(const CLI::App& recalibrate, const RecalibrateOptions& o, std::ostream& out) {
  if (recalibrate.got_subcommand("fit")) return run_fit(o, out);
  return run_apply(o, out);
}

}  // namespace calbench
