// Golden files for the shipped configs (docs/testing.md). For a config NAME it merges
// configs/NAME.json with the JSON merge patch tests/golden/NAME.patch.json (RFC 7386: the patch
// only shrinks replicates, sample sizes, sweep lists and truth samples, so an edit of the shipped
// config reaches the small run), runs the calbench binary on the merged config and compares
// summary.json, cells.csv, requirements.csv, reliability.csv, leaderboard.csv,
// leaderboard_agreement.csv and leaderboard_contrast.csv byte for byte with
// tests/golden/NAME/. It talks to calbench only through its command line, so it does not depend on
// any internal API.
//
// Usage: calbench_golden [--update] [--threads N[,M...]] [--keep] (--all | NAME...)
//   --update      rewrite the golden files from this build instead of comparing
//   --threads     thread counts to run (default 2); every run must match the same golden
//   --keep        keep the temporary directory
//   --calbench P  the binary to run (default: the one built beside this test)
//   --source DIR  the repository root (default: the one this test was configured from)
// Exit status: 0 all match (or updated), 1 a mismatch, 2 a usage or run error.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The files a run writes that are pure functions of the config (DESIGN.md §4). run.json and
// config.resolved.json carry volatile facts and the build's revision, so they are not compared.
const std::vector<std::string> compared_files = {"summary.json",
                                                 "cells.csv",
                                                 "requirements.csv",
                                                 "reliability.csv",
                                                 "leaderboard.csv",
                                                 "leaderboard_agreement.csv",
                                                 "leaderboard_contrast.csv"};

struct Options {
  bool update = false;
  bool keep = false;
  std::vector<unsigned> threads{2};
  fs::path calbench = CALBENCH_BINARY;
  fs::path source = CALBENCH_SOURCE_DIR;
  std::vector<std::string> names;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// The build's git revision is the only volatile value inside the compared files: in the JSON
// meta block ("git_revision": "6f3f1ae1214c") and in a meta block written as leading `#` lines
// of a CSV file (# git_revision: ..., # git_revision=..., # "git_revision": "...").
std::string mask_volatile(const std::string& text) {
  static const std::regex revision(R"re((git_revision"?\s*[:=,]\s*"?)[^"\s,]*)re");
  return std::regex_replace(text, revision, "$1<masked>");
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Prints the first differing line with two lines of context, unified-diff style.
void print_first_difference(const fs::path& golden, const std::string& expected,
                            const std::string& actual) {
  const auto a = split_lines(expected);
  const auto b = split_lines(actual);
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i >= 2 ? i - 2 : 0;
  std::cerr << "--- " << golden.string() << "\n+++ this build\n@@ line " << i + 1 << " (golden "
            << a.size() << " lines, this build " << b.size() << ") @@\n";
  for (std::size_t j = from; j < i; ++j) std::cerr << ' ' << a[j] << '\n';
  for (std::size_t j = i; j < std::min(a.size(), i + 3); ++j) std::cerr << '-' << a[j] << '\n';
  for (std::size_t j = i; j < std::min(b.size(), i + 3); ++j) std::cerr << '+' << b[j] << '\n';
  if (i == a.size() && i == b.size()) std::cerr << "(the files differ only in line endings)\n";
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> all_names(const fs::path& source) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(source / "configs"))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A rows file named relative to the config's folder (an empirical generator's `rows` with its
// `sha256`) is copied to the same relative place beside the merged copy, so the copy finds it
// under the name the config gives: the config's text, and so its config_hash in summary.json,
// stays the same wherever the checkout is.
void copy_rows(const nlohmann::ordered_json& j, const fs::path& folder, const fs::path& dir) {
  if (j.is_object() && j.contains("rows") && j["rows"].is_string() && j.contains("sha256")) {
    const fs::path rows = j["rows"].get<std::string>();
    if (rows.is_relative()) {
      fs::create_directories((dir / rows).parent_path());
      fs::copy_file(folder / rows, dir / rows, fs::copy_options::overwrite_existing);
    }
  }
  if (j.is_structured())
    for (const auto& child : j) copy_rows(child, folder, dir);
}

// Runs one name at one thread count; returns the number of mismatching files.
int check(const Options& opt, const std::string& name, unsigned threads, const fs::path& work) {
  const fs::path config_path = opt.source / "configs" / (name + ".json");
  const fs::path patch_path = opt.source / "tests" / "golden" / (name + ".patch.json");
  const fs::path golden_dir = opt.source / "tests" / "golden" / name;
  if (!fs::exists(patch_path))
    throw std::runtime_error(patch_path.string() + " is missing: every shipped config needs a " +
                             "patch that makes it small (docs/testing.md)");
  // ordered_json: the order of the sweep keys is the order of the cells (DESIGN.md §3).
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(read_text(config_path));
  config.merge_patch(nlohmann::ordered_json::parse(read_text(patch_path)));

  const fs::path dir = work / (name + ".t" + std::to_string(threads));
  fs::create_directories(dir);
  copy_rows(config, config_path.parent_path(), dir);
  const fs::path merged = dir / "merged.json";
  write_text(merged, config.dump(2) + "\n");
  const fs::path out = dir / "out";
  const std::string command = shell_quote(opt.calbench.string()) + " run " +
                              shell_quote(merged.string()) + " --out " + shell_quote(out.string()) +
                              " --quiet --no-report --threads " + std::to_string(threads);
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error(name + ": `" + command + "` failed");

  int mismatches = 0;
  if (opt.update) fs::create_directories(golden_dir);
  for (const auto& file : compared_files) {
    const fs::path produced = out / file;
    const fs::path golden = golden_dir / file;
    const bool have_produced = fs::exists(produced);
    const bool have_golden = fs::exists(golden);
    if (opt.update) {
      if (have_produced) {
        const std::string text = mask_volatile(read_text(produced));
        if (!have_golden || read_text(golden) != text) {
          write_text(golden, text);
          std::cout << "updated " << golden.string() << '\n';
        }
      } else if (have_golden) {
        fs::remove(golden);
        std::cout << "removed " << golden.string() << '\n';
      }
      continue;
    }
    if (!have_produced && !have_golden) continue;
    if (have_produced != have_golden) {
      std::cerr << name << " (--threads " << threads << "): " << file
                << (have_golden ? " was not written" : " was written but has no golden file")
                << '\n';
      ++mismatches;
      continue;
    }
    const std::string expected = read_text(golden);
    const std::string actual = mask_volatile(read_text(produced));
    if (expected != actual) {
      std::cerr << name << " (--threads " << threads << "): " << file
                << " differs from its golden file\n";
      print_first_difference(golden, expected, actual);
      ++mismatches;
    }
  }
  return mismatches;
}

std::vector<unsigned> parse_threads(const std::string& list) {
  std::vector<unsigned> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    const unsigned long n = std::stoul(item);
    if (n == 0) throw std::invalid_argument("thread count 0");
    out.push_back(static_cast<unsigned>(n));
  }
  if (out.empty()) throw std::invalid_argument("empty thread list");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  bool all = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
        return argv[++i];
      };
      if (arg == "--update")
        opt.update = true;
      else if (arg == "--keep")
        opt.keep = true;
      else if (arg == "--all")
        all = true;
      else if (arg == "--threads")
        opt.threads = parse_threads(value());
      else if (arg == "--calbench")
        opt.calbench = value();
      else if (arg == "--source")
        opt.source = value();
      else if (arg.starts_with("-"))
        throw std::invalid_argument("unknown option " + arg);
      else
        opt.names.push_back(arg);
    }
    if (all) opt.names = all_names(opt.source);
    if (opt.names.empty()) throw std::invalid_argument("give config names or --all");
  } catch (const std::exception& e) {
    std::cerr << "calbench_golden: " << e.what()
              << "\nusage: calbench_golden [--update] [--threads N[,M...]] [--keep] "
                 "[--calbench BINARY] [--source DIR] (--all | NAME...)\n";
    return 2;
  }

  const fs::path work = fs::temp_directory_path() /
                        ("calbench_golden." + std::to_string(static_cast<long>(::getpid())));
  int status = 0;
  try {
    fs::create_directories(work);
    for (const auto& name : opt.names) {
      // An update runs once (the first thread count); a check runs every thread count
      // against the same golden, since output is byte-identical for any thread count.
      for (const unsigned threads : opt.threads) {
        const int mismatches = check(opt, name, threads, work);
        if (mismatches > 0)
          status = 1;
        else if (!opt.update)
          std::cout << name << " (--threads " << threads << "): matches its golden files\n";
        if (opt.update) break;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "calbench_golden: " << e.what() << '\n';
    status = 2;
  }
  if (opt.keep)
    std::cout << "kept " << work.string() << '\n';
  else
    fs::remove_all(work);
  if (status == 1 && !opt.update)
    std::cerr << "If the change is intended, rewrite the golden files with\n"
                 "  build/release/calbench_golden --update --all\n"
                 "and commit them with the change that explains them (docs/testing.md).\n";
  return status;
}
