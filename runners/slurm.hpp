#pragma once
// `calbench slurm CONFIG --shards N` (docs/cluster.md): writes a Slurm job-array script whose
// task I runs `calbench run --shard I/N --resume`, a merge script for a job that depends on the
// array (afterok), and submit.sh, which submits both; with --submit it runs submit.sh.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace calbench {

// Everything the scripts say; the paths are absolute. The scripts are a pure function of it.
struct SlurmJob {
  std::filesystem::path calbench;    // the binary the jobs run
  std::filesystem::path config;      // the config the shards run (the copy in script_dir)
  std::filesystem::path workdir;     // the jobs `cd` here (where `calbench slurm` ran)
  std::filesystem::path out;         // the merged result set; shard I goes to OUT.shard-I-of-N
  std::filesystem::path script_dir;  // the scripts, and logs/ for the jobs' output
  std::string name;                  // the config's name: jobs are calbench-NAME(-merge)
  std::size_t shards = 1;
  std::size_t cpus = 1;                    // --cpus-per-task of every job, and calbench's --threads
  std::optional<std::size_t> max_running;  // the array's %M: at most M shards at once
  std::string partition, time, mem, account, qos;  // sbatch options; empty: not given
  std::vector<std::string> sbatch;  // further options, each one #SBATCH line (e.g. --exclusive)
};

struct SlurmScripts {
  std::string shards;  // shards.sbatch: the job array
  std::string merge;   // merge.sbatch: the merge, submitted with --dependency=afterok:ARRAY
  std::string submit;  // submit.sh: submits both, printing their job ids
};

// Throws InputError for a value a script cannot carry (a newline; in an #SBATCH line a
// backslash, or both kinds of quote).
SlurmScripts slurm_scripts(const SlurmJob& job);

// `text` as one word of a POSIX shell command line: in single quotes ('\'' for a quote), bare
// when it has only characters no shell treats specially.
std::string shell_word(std::string_view text);

// `text` as the value of an #SBATCH option: sbatch splits its lines at blanks and removes one
// level of quotes (src/sbatch/opt.c, _get_argument), so a value with a blank, a quote or a #
// is put in the quotes it does not contain.
std::string sbatch_word(std::string_view what, std::string_view text);

struct SlurmOptions {
  std::string config;
  std::size_t shards = 0;
  std::optional<std::string> out;         // default: the config's output.directory
  std::optional<std::string> script_dir;  // default: OUT.slurm
  std::size_t cpus = 1;
  std::optional<std::size_t> max_running;
  std::string partition, time, mem, account, qos;
  std::vector<std::string> sbatch;
  bool submit = false;
};

// Loads and validates the config (exit 2 on any problem, nothing written), writes the config's
// copy and the three scripts into the script directory, and prints how to submit them (or,
// with `submit`, runs submit.sh and returns 1 if it fails).
int run_slurm(const SlurmOptions& options, std::ostream& out);

}  // namespace calbench
