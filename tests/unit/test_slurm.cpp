// calbench slurm (runners/slurm.hpp): the scripts' text for a fixed job, the quoting of shell
// words (checked by a real /bin/sh) and of #SBATCH values, and what cannot be written.
// tests/cli/slurm.sh runs the scripts (without Slurm and on a real one-node cluster).
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "runners/slurm.hpp"
#include "temp_files.hpp"

namespace {

using calbench::InputError;
using calbench::SlurmJob;

// A job with every option and paths that need quoting (a blank, a quote).
SlurmJob example_job() {
  SlurmJob job;
  job.calbench = "/opt/calbench/bin/calbench";
  job.config = "/scratch/ana's runs/q.slurm/config.json";
  job.workdir = "/home/ana/project";
  job.out = "/scratch/ana's runs/q";
  job.script_dir = "/scratch/ana's runs/q.slurm";
  job.name = "quickstart";
  job.shards = 4;
  job.cpus = 8;
  job.max_running = 2;
  job.partition = "short";
  job.time = "04:00:00";
  job.mem = "8G";
  job.account = "";
  job.qos = "";
  job.sbatch = {"--exclusive", "--comment=calbench shards"};
  return job;
}

// What /bin/sh makes of `word` as the argument of printf %s.
std::string shell_reads(const std::string& word) {
  calbench::testing::TempDir dir;
  const auto file = dir.path / "out";
  const std::string command = "printf %s " + word + " > " + calbench::shell_word(file.string());
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return calbench::testing::read_text(file);
}

}  // namespace

TEST_CASE("slurm: the scripts of a fixed job, byte for byte", "[unit][slurm]") {
  const calbench::SlurmScripts scripts = calbench::slurm_scripts(example_job());
  CHECK(scripts.shards == R"(#!/bin/bash
# The shards of calbench run quickstart: array task I runs shard I of 4 into OUT.shard-I-of-4.
# Written by `calbench slurm`; submit.sh submits it with the merge job (docs/cluster.md).
# A task requeued (preemption, node failure) or submitted again continues its shard's
# journal (--resume); a shard already complete is not run again.
#SBATCH --job-name=calbench-quickstart
#SBATCH --array=1-4%2
#SBATCH --cpus-per-task=8
#SBATCH --partition=short
#SBATCH --time=04:00:00
#SBATCH --mem=8G
#SBATCH --exclusive
#SBATCH "--comment=calbench shards"
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output="/scratch/ana's runs/q.slurm/logs/shard-%a.out"
set -euo pipefail
shard=${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is a job array}
out='/scratch/ana'\''s runs/q'".shard-$shard-of-4"
cd /home/ana/project
if [ -f "$out/shard.json" ] && cmp -s "$out/config.json" '/scratch/ana'\''s runs/q.slurm/config.json'; then
  echo "calbench: shard $shard/4 is complete in $out"
  exit 0
fi
exec /opt/calbench/bin/calbench run '/scratch/ana'\''s runs/q.slurm/config.json' --shard "$shard/4" --out "$out" --threads 8 --resume
)");
  CHECK(scripts.merge == R"(#!/bin/bash
# The merge of calbench run quickstart: joins its 4 shards into OUT once every array task has succeeded
# (submit.sh submits it with --dependency=afterok:ARRAY_JOB; docs/cluster.md).
#SBATCH --job-name=calbench-quickstart-merge
#SBATCH --cpus-per-task=8
#SBATCH --partition=short
#SBATCH --time=04:00:00
#SBATCH --mem=8G
#SBATCH --exclusive
#SBATCH "--comment=calbench shards"
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --kill-on-invalid-dep=yes
#SBATCH --output="/scratch/ana's runs/q.slurm/logs/merge.out"
set -euo pipefail
cd /home/ana/project
shards=()
for ((i = 1; i <= 4; i++)); do shards+=('/scratch/ana'\''s runs/q'".shard-$i-of-4"); done
exec /opt/calbench/bin/calbench merge "${shards[@]}" --out '/scratch/ana'\''s runs/q' --threads 8
)");
  CHECK(scripts.submit == R"(#!/bin/sh
# Submits the shards of calbench run quickstart as a job array and their merge as a job that starts once
# every shard has succeeded. Written by `calbench slurm` (docs/cluster.md).
set -eu
array=$(sbatch --parsable '/scratch/ana'\''s runs/q.slurm'/shards.sbatch)
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterok:"$array" '/scratch/ana'\''s runs/q.slurm'/merge.sbatch)
merge=${merge%%;*}
echo "submitted: shards as job array $array (4 tasks), merge as job $merge"
echo "watch with: squeue --jobs $array,$merge; logs in "'/scratch/ana'\''s runs/q.slurm/logs'
echo "results: "'/scratch/ana'\''s runs/q'
)");
  // The same job gives the same bytes (no time, host or counter in the text).
  CHECK(calbench::slurm_scripts(example_job()).shards == scripts.shards);
}

TEST_CASE("slurm: the scripts are valid bash", "[unit][slurm]") {
  calbench::testing::TempDir dir;
  const calbench::SlurmScripts scripts = calbench::slurm_scripts(example_job());
  for (const auto& [name, text] :
       {std::pair{"shards.sbatch", &scripts.shards}, std::pair{"merge.sbatch", &scripts.merge},
        std::pair{"submit.sh", &scripts.submit}}) {
    const auto file = dir.path / name;
    calbench::write_file_atomically(file, *text);
    const int status = std::system(("bash -n " + calbench::shell_word(file.string())).c_str());
    INFO(name);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("slurm: a shell word is read back as the text it quotes", "[unit][slurm]") {
  CHECK(calbench::shell_word("/usr/bin/calbench") == "/usr/bin/calbench");
  CHECK(calbench::shell_word("") == "''");
  CHECK(calbench::shell_word("it's") == "'it'\\''s'");
  for (const std::string text :
       {"plain/path-1.json", "a b", "it's", "''", "$HOME", "`id`", "$(id)", "a\"b", "*", "~",
        "a\\b", "tab\there", "semi;colon", "line\nbreak", "!event", "%a", ""}) {
    INFO(text);
    CHECK(shell_reads(calbench::shell_word(text)) == text);
  }
}

TEST_CASE("slurm: #SBATCH values are quoted the way sbatch reads them", "[unit][slurm]") {
  CHECK(calbench::sbatch_word("x", "04:00:00") == "04:00:00");
  CHECK(calbench::sbatch_word("x", "/a b/c") == "\"/a b/c\"");
  CHECK(calbench::sbatch_word("x", "/it's") == "\"/it's\"");
  CHECK(calbench::sbatch_word("x", "#1") == "\"#1\"");  // an unquoted # starts a comment
  CHECK(calbench::sbatch_word("x", "say \"hi\"") == "'say \"hi\"'");
  CHECK_THROWS_WITH(calbench::sbatch_word("--comment", "it's \"x\""),
                    Catch::Contains("--comment") && Catch::Contains("both kinds of quote"));
  CHECK_THROWS_WITH(calbench::sbatch_word("--comment", "a\\b"), Catch::Contains("backslash"));
  CHECK_THROWS_WITH(calbench::sbatch_word("--comment", "a\nb"), Catch::Contains("line break"));
}

TEST_CASE("slurm: what the scripts cannot carry is refused before anything is written",
          "[unit][slurm]") {
  SlurmJob job = example_job();
  job.out = "/scratch/two\nlines";
  CHECK_THROWS_AS(calbench::slurm_scripts(job), InputError);
  job = example_job();
  job.sbatch = {"exclusive"};
  CHECK_THROWS_WITH(calbench::slurm_scripts(job), Catch::Contains("expected an sbatch option"));
  job = example_job();
  job.partition = "a\"b'c";
  CHECK_THROWS_WITH(calbench::slurm_scripts(job), Catch::Contains("--partition"));
  // A % in the script directory is doubled in --output, where Slurm reads %a, %j, ...
  job = example_job();
  job.script_dir = "/scratch/100%/q.slurm";
  CHECK_THAT(calbench::slurm_scripts(job).shards,
             Catch::Contains("#SBATCH --output=/scratch/100%%/q.slurm/logs/shard-%a.out\n"));
}
