#include "runners/slurm.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/read_file.hpp"
#include "experiment/experiment.hpp"
#include "report/result_set.hpp"
#include "runners/command.hpp"
#include "scenarios/registry.hpp"

namespace calbench {
namespace {

namespace fs = std::filesystem;

// The rows files an empirical generator names relative to the config (objects with "rows" and
// "sha256", anywhere in it, the sweep too), as written in `text`, the config file `config`
// (validated already). One that leaves the config's folder ("../x.npy") is refused: its copy
// would land outside the script directory.
std::vector<fs::path> relative_rows(const std::string& text, const std::string& config) {
  std::vector<fs::path> out;
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
  const auto walk = [&](const auto& self, const nlohmann::json& j) -> void {
    if (j.is_object() && j.contains("rows") && j["rows"].is_string() && j.contains("sha256")) {
      const fs::path rows = j["rows"].get<std::string>();
      if (rows.is_relative()) {
        for (const auto& part : rows.lexically_normal())
          if (part == "..")
            throw InputError(config + ": rows file " + rows.string() +
                             " is outside the config's folder: calbench slurm copies the config "
                             "and its relative rows files into the script directory; give its "
                             "absolute path");
        if (std::find(out.begin(), out.end(), rows) == out.end()) out.push_back(rows);
      }
    }
    if (j.is_structured())
      for (const auto& child : j) self(self, child);
  };
  walk(walk, document);
  return out;
}

void refuse_newline(std::string_view what, std::string_view text) {
  if (text.find('\n') != std::string_view::npos || text.find('\r') != std::string_view::npos)
    throw InputError(std::string(what) + " has a line break, which a job script cannot carry");
}

// A directory for a Slurm filename pattern: `%` is its escape character (%% is a literal %).
std::string pattern_escaped(const std::filesystem::path& dir) {
  std::string text;
  for (const char c : dir.string()) {
    if (c == '%') text += '%';
    text += c;
  }
  return text;
}

// The #SBATCH lines both jobs share: resources, then the caller's options, then requeueing
// (a preempted or failed node's job runs again and --resume continues it) with its log kept.
std::string resource_lines(const SlurmJob& job) {
  std::string lines = "#SBATCH --cpus-per-task=" + std::to_string(job.cpus) + "\n";
  const std::pair<const char*, const std::string*> options[] = {{"partition", &job.partition},
                                                                {"time", &job.time},
                                                                {"mem", &job.mem},
                                                                {"account", &job.account},
                                                                {"qos", &job.qos}};
  for (const auto& [name, value] : options)
    if (!value->empty())
      lines += "#SBATCH --" + std::string(name) + "=" +
               sbatch_word(std::string("--") + name, *value) + "\n";
  for (const auto& option : job.sbatch) {
    if (option.empty() || option.front() != '-')
      throw InputError("--sbatch " + option + ": expected an sbatch option such as --exclusive");
    lines += "#SBATCH " + sbatch_word("--sbatch", option) + "\n";
  }
  return lines + "#SBATCH --requeue\n#SBATCH --open-mode=append\n";
}

std::string output_line(const SlurmJob& job, std::string_view file_pattern) {
  return "#SBATCH --output=" +
         sbatch_word("the script directory",
                     pattern_escaped(job.script_dir / "logs") + "/" + std::string(file_pattern)) +
         "\n";
}

}  // namespace

std::string shell_word(std::string_view text) {
  const bool bare = !text.empty() && text.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_@%+=:,./-") == std::string_view::npos;
  if (bare) return std::string(text);
  std::string word = "'";
  for (const char c : text) word += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return word + "'";
}

std::string sbatch_word(std::string_view what, std::string_view text) {
  refuse_newline(what, text);
  if (text.find('\\') != std::string_view::npos)
    throw InputError(std::string(what) + " = " + std::string(text) +
                     ": a backslash cannot be carried by an #SBATCH line");
  if (text.find_first_of(" \t\"'#") == std::string_view::npos) return std::string(text);
  // (Written as appends: GCC 12 warns falsely, -Wrestrict, on "c" + std::string(text).)
  const char quote = text.find('"') == std::string_view::npos ? '"' : '\'';
  if (quote == '\'' && text.find('\'') != std::string_view::npos)
    throw InputError(std::string(what) + " = " + std::string(text) +
                     ": both kinds of quote cannot be carried by an #SBATCH line");
  return std::string(1, quote).append(text).append(1, quote);
}

SlurmScripts slurm_scripts(const SlurmJob& job) {
  // In the order the paths derive from one another: the script directory defaults to
  // OUT.slurm and the config is copied into it, so a line break in --out is named as --out's,
  // not the config's (issue #28).
  for (const auto& [what, path] :
       {std::pair{"the calbench binary", &job.calbench},
        std::pair{"the working directory", &job.workdir}, std::pair{"--out", &job.out},
        std::pair{"the script directory", &job.script_dir}, std::pair{"the config", &job.config}})
    refuse_newline(what, path->string());
  const std::string n = std::to_string(job.shards);
  const std::string threads = std::to_string(job.cpus);
  const std::string out = shell_word(job.out.string());
  const std::string calbench = shell_word(job.calbench.string());
  const std::string config = shell_word(job.config.string());
  const std::string name = "calbench-" + job.name;
  const std::string resources = resource_lines(job);

  SlurmScripts scripts;
  std::string array = std::string("1-").append(n);
  if (job.max_running) array.append("%").append(std::to_string(*job.max_running));
  scripts.shards =
      "#!/bin/bash\n"
      "# The shards of calbench run " +
      job.name + ": array task I runs shard I of " + n + " into OUT.shard-I-of-" + n +
      ".\n"
      "# Written by `calbench slurm`; submit.sh submits it with the merge job "
      "(docs/cluster.md).\n"
      "# A task requeued (preemption, node failure) or submitted again continues "
      "its shard's\n"
      "# journal (--resume); a shard already complete is not run again.\n"
      "#SBATCH --job-name=" +
      sbatch_word("the config's name", name) + "\n#SBATCH --array=" + array + "\n" + resources +
      output_line(job, "shard-%a.out") +
      "set -euo pipefail\n"
      "shard=${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is a job "
      "array}\n"
      "out=" +
      out + "\".shard-$shard-of-" + n + "\"\ncd " + shell_word(job.workdir.string()) +
      "\n"
      "if [ -f \"$out/shard.json\" ] && cmp -s \"$out/config.json\" " +
      config +
      "; then\n"
      "  echo \"calbench: shard $shard/" +
      n +
      " is complete in $out\"\n"
      "  exit 0\n"
      "fi\n"
      "exec " +
      calbench + " run " + config + " --shard \"$shard/" + n + "\" --out \"$out\" --threads " +
      threads + " --resume\n";

  scripts.merge =
      "#!/bin/bash\n"
      "# The merge of calbench run " +
      job.name + ": joins its " + n +
      " shards into OUT once every array task has succeeded\n"
      "# (submit.sh submits it with --dependency=afterok:ARRAY_JOB; docs/cluster.md).\n"
      "#SBATCH --job-name=" +
      sbatch_word("the config's name", name + "-merge") + "\n" + resources +
      "#SBATCH --kill-on-invalid-dep=yes\n" + output_line(job, "merge.out") +
      "set -euo pipefail\n"
      "cd " +
      shell_word(job.workdir.string()) +
      "\n"
      "shards=()\n"
      "for ((i = 1; i <= " +
      n + "; i++)); do shards+=(" + out + "\".shard-$i-of-" + n +
      "\"); done\n"
      "exec " +
      calbench + " merge \"${shards[@]}\" --out " + out + " --threads " + threads + "\n";

  const std::string dir = shell_word(job.script_dir.string());
  const std::string logs = shell_word((job.script_dir / "logs").string());
  scripts.submit =
      "#!/bin/sh\n"
      "# Submits the shards of calbench run " +
      job.name +
      " as a job array and their merge as a job that starts once\n"
      "# every shard has succeeded. Written by `calbench slurm` "
      "(docs/cluster.md).\n"
      "set -eu\n"
      "array=$(sbatch --parsable " +
      dir +
      "/shards.sbatch)\n"
      "array=${array%%;*}\n"
      "merge=$(sbatch --parsable --dependency=afterok:\"$array\" " +
      dir +
      "/merge.sbatch)\n"
      "merge=${merge%%;*}\n"
      "echo \"submitted: shards as job array $array (" +
      n +
      " tasks), merge as job $merge\"\n"
      "echo \"watch with: squeue --jobs $array,$merge; logs in \"" +
      logs + "\necho \"results: \"" + out + "\n";
  return scripts;
}

int run_slurm(const SlurmOptions& options, std::ostream& out) {
  const std::unique_ptr<ExperimentBase> config = load_experiment(options.config);
  module_of(*config);

  SlurmJob job;
  std::error_code error;
  job.calbench = fs::read_symlink("/proc/self/exe", error);
  if (error)
    throw InputError("cannot find the calbench binary (/proc/self/exe): " + error.message());
  job.workdir = fs::current_path();
  fs::path result_dir =
      fs::absolute(options.out ? fs::path(*options.out) : config->output.directory)
          .lexically_normal();
  if (!result_dir.has_filename()) result_dir = result_dir.parent_path();  // "results/x/"
  job.out = result_dir;
  fs::path script_dir =
      options.script_dir ? fs::absolute(*options.script_dir).lexically_normal() : result_dir;
  if (!options.script_dir) script_dir += ".slurm";
  if (!script_dir.has_filename()) script_dir = script_dir.parent_path();
  job.script_dir = script_dir;
  const auto [mismatch, rest] =
      std::mismatch(result_dir.begin(), result_dir.end(), script_dir.begin(), script_dir.end());
  if (mismatch == result_dir.end())
    throw InputError("--script-dir " + script_dir.string() + " is inside the result directory " +
                     result_dir.string() + ", which the merge replaces whole");
  job.config = script_dir / "config.json";
  job.name = config->name;
  job.shards = options.shards;
  job.cpus = options.cpus;
  job.max_running = options.max_running;
  job.partition = options.partition;
  job.time = options.time;
  job.mem = options.mem;
  job.account = options.account;
  job.qos = options.qos;
  job.sbatch = options.sbatch;
  const SlurmScripts scripts = slurm_scripts(job);  // refuses what it cannot write, before writing

  const FileBytes config_text = read_file(options.config);
  if (!config_text) throw InputError("cannot read " + options.config + " again to copy it");
  const std::vector<fs::path> rows = relative_rows(config_text.bytes, options.config);
  // A file of these names already there is replaced only when it holds what would be written
  // (the same command again); another job's scripts or a user's config.json are refused.
  std::vector<std::string> differing;
  const std::pair<const char*, const std::string*> planned[] = {{"config.json", &config_text.bytes},
                                                                {"shards.sbatch", &scripts.shards},
                                                                {"merge.sbatch", &scripts.merge},
                                                                {"submit.sh", &scripts.submit}};
  for (const auto& [file, text] : planned) {
    if (!fs::exists(fs::symlink_status(script_dir / file, error))) continue;
    const FileBytes existing = read_file(script_dir / file);
    if (!existing || existing.bytes != *text) differing.emplace_back(file);
  }
  if (!differing.empty())
    throw OutputError("--script-dir " + script_dir.string() + " already holds " +
                      join(differing, ", ") +
                      " with other contents: calbench slurm does not overwrite files it did not "
                      "write; remove them or choose another --script-dir");
  fs::create_directories(script_dir / "logs", error);
  if (error)
    throw OutputError("cannot create the script directory " + (script_dir / "logs").string() +
                      ": " + error.message());
  // The shards run this copy: editing the original later cannot mix two configs in one run.
  // An empirical generator's rows file named relative to the config is copied to the same
  // place beside the copy (its SHA-256 is in the config), so the copy reads the same rows and
  // its bytes, and so the run's config_hash, stay the original's.
  for (const fs::path& file : rows) {
    fs::create_directories((script_dir / file).parent_path(), error);
    fs::copy_file(fs::path(options.config).parent_path() / file, script_dir / file,
                  fs::copy_options::overwrite_existing, error);
    if (error)
      throw OutputError("cannot copy the rows file " + file.string() + " to " +
                        script_dir.string() + ": " + error.message());
  }
  write_file_atomically(job.config, config_text.bytes);
  const std::pair<const char*, const std::string*> files[] = {{"shards.sbatch", &scripts.shards},
                                                              {"merge.sbatch", &scripts.merge},
                                                              {"submit.sh", &scripts.submit}};
  for (const auto& [file, text] : files) {
    write_file_atomically(script_dir / file, *text);
    fs::permissions(script_dir / file,
                    fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
  }
  const std::string submit = (script_dir / "submit.sh").string();
  if (!options.submit) {
    out << "wrote " << (script_dir / "shards.sbatch").string() << " (" << job.shards
        << " array tasks) and " << (script_dir / "merge.sbatch").string() << " (the merge into "
        << result_dir.string() << ")\nsubmit both with: " << shell_word(submit) << '\n';
    return 0;
  }
  out.flush();
  const int status = std::system(shell_word(submit).c_str());
  if (status != 0) {
    std::cerr << "calbench: " << submit << " failed (status " << status << "); the scripts are in "
              << script_dir.string() << '\n';
    return 1;
  }
  return 0;
}

Command add_slurm_command(CLI::App& app) {
  auto o = std::make_shared<SlurmOptions>();
  auto* slurm = app.add_subcommand(
      "slurm", "write a Slurm job array of N shards and a dependent merge job (docs/cluster.md)");
  slurm->add_option("CONFIG", o->config, "experiment config (JSON)")->required();
  slurm->add_option("--shards", o->shards, "N: the number of shards (array tasks)")
      ->required()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  slurm->add_option("--out", o->out, "the merged result set (default output.directory)")
      ->check(directory_text());
  slurm->add_option("--script-dir", o->script_dir,
                    "where the scripts and logs/ go (default OUT.slurm)");
  slurm->add_option("--cpus", o->cpus, "--cpus-per-task of each job and its --threads")
      ->check(thread_range());
  slurm->add_option("--max-running", o->max_running, "at most M shards at once (%M)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  for (auto [flag, value] : {std::pair{"--partition", &o->partition}, std::pair{"--time", &o->time},
                             std::pair{"--mem", &o->mem}, std::pair{"--account", &o->account},
                             std::pair{"--qos", &o->qos}})
    slurm->add_option(flag, *value, std::string("sbatch ") + flag + " of every job");
  slurm
      ->add_option("--sbatch", o->sbatch,
                   "one more sbatch option for every job, e.g. --sbatch=--exclusive (repeatable)")
      ->allow_extra_args(false);
  slurm->add_flag("--submit", o->submit, "submit the jobs (run submit.sh)");
  return {slurm, [o] { return run_slurm(*o, std::cout); }};
}

}  // namespace calbench
