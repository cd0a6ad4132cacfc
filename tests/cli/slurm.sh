#!/usr/bin/env bash
# calbench slurm without a cluster (docs/cluster.md): the scripts it writes for a path with a
# blank and a quote are run as Slurm would run them (each array task with its
# SLURM_ARRAY_TASK_ID, then the merge), and the merged set equals one `calbench run` byte for
# byte but run.json; a complete shard run again does nothing; submit.sh chains the two jobs
# (afterok on the array's id) through a stand-in sbatch; bad input exits 2 writing nothing.
# tests/cli/slurm_cluster.sh runs the same scripts on a real one-node Slurm cluster.
#
# Usage: tests/cli/slurm.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_slurm usage="CALBENCH_BINARY SOURCE_DIR" fail_fast=1
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

. "$src/tests/cli/result_sets.sh"

config="$src/tests/data/tiny.json"
"$bin" run "$config" --out single --threads 2 --quiet || fail "single run failed"

base="$work/it's a dir"
out="$base/res"
"$bin" slurm "$config" --shards 3 --out "$out" --cpus 2 --time 0:10:00 >slurm.txt 2>&1 ||
  fail "calbench slurm failed: $(cat slurm.txt)"
dir="$out.slurm"
for file in shards.sbatch merge.sbatch submit.sh config.json; do
  [ -f "$dir/$file" ] || fail "no $dir/$file"
done
[ -x "$dir/submit.sh" ] || fail "submit.sh is not executable"
cmp -s "$config" "$dir/config.json" || fail "the config's copy differs from the config"
grep -qF "submit both with: '$work/it'\\''s a dir/res.slurm/submit.sh'" slurm.txt ||
  fail "no submit line with the quoted path: $(cat slurm.txt)"
# Deterministic: writing the scripts again gives the same bytes.
cp "$dir/shards.sbatch" first.sbatch
"$bin" slurm "$config" --shards 3 --out "$out" --cpus 2 --time 0:10:00 >/dev/null ||
  fail "calbench slurm failed the second time"
cmp -s first.sbatch "$dir/shards.sbatch" || fail "a second calbench slurm wrote other bytes"

# The array tasks and the merge, as Slurm runs them (from another directory: the scripts cd).
cd / || exit 1
for i in 3 1 2; do
  SLURM_ARRAY_TASK_ID=$i bash "$dir/shards.sbatch" >"$work/shard$i.log" 2>&1 ||
    fail "array task $i failed: $(cat "$work/shard$i.log")"
  [ -f "$out.shard-$i-of-3/shard.json" ] || fail "array task $i wrote no shard"
done
SLURM_ARRAY_TASK_ID=2 bash "$dir/shards.sbatch" >"$work/again.log" 2>&1 ||
  fail "array task 2 run again failed"
grep -q "shard 2/3 is complete" "$work/again.log" || fail "a complete shard ran again: $(cat "$work/again.log")"
bash "$dir/shards.sbatch" >"$work/nosl.log" 2>&1 && fail "the array script ran without SLURM_ARRAY_TASK_ID"
bash "$dir/merge.sbatch" >"$work/merge.log" 2>&1 || fail "the merge failed: $(cat "$work/merge.log")"
cd "$work" || exit 1
same_set single "$out" "3 shards through the job scripts, merged"

# submit.sh: the array first, then the merge with afterok on the array's job id (sbatch
# --parsable prints ID or ID;CLUSTER).
mkdir fake
cat >fake/sbatch <<'EOF'
#!/bin/sh
n=$(($(cat "$FAKE_COUNT" 2>/dev/null || echo 0) + 1))
echo $n >"$FAKE_COUNT"
printf '%s\n' "$*" >>"$FAKE_LOG"
[ $n -eq 1 ] && echo "41;cluster" || echo 42
EOF
chmod +x fake/sbatch
FAKE_COUNT="$work/count" FAKE_LOG="$work/sbatch.log" PATH="$work/fake:$PATH" "$bin" slurm "$config" \
  --shards 3 --out "$out" --cpus 2 --time 0:10:00 --submit >submit.txt 2>&1 ||
  fail "--submit failed: $(cat submit.txt)"
[ "$(sed -n 1p sbatch.log)" = "--parsable $dir/shards.sbatch" ] ||
  fail "the array's sbatch line: $(sed -n 1p sbatch.log)"
[ "$(sed -n 2p sbatch.log)" = "--parsable --dependency=afterok:41 $dir/merge.sbatch" ] ||
  fail "the merge's sbatch line: $(sed -n 2p sbatch.log)"
grep -q "shards as job array 41 (3 tasks), merge as job 42" submit.txt ||
  fail "no job ids in the output: $(cat submit.txt)"
printf '#!/bin/sh\necho "sbatch: error: Batch job submission failed" >&2\nexit 1\n' >fake/sbatch
PATH="$work/fake:$PATH" "$bin" slurm "$config" --shards 3 --out "$out" --cpus 2 --time 0:10:00 \
  --submit >failed.txt 2>&1
[ $? -eq 1 ] || fail "a failing sbatch did not make --submit exit 1"

# Bad input: exit 2 and no script directory.
for args in "--shards 0" "--shards 3 --sbatch=exclusive" "--shards 3 --partition a\"b'c"; do
  # shellcheck disable=SC2086
  "$bin" slurm "$config" --out bad $args >bad.txt 2>&1
  [ $? -eq 2 ] || fail "calbench slurm $args did not exit 2: $(cat bad.txt)"
  [ -e bad.slurm ] || [ -e bad ] && fail "calbench slurm $args wrote files"
done
"$bin" slurm "$config" --out bad --shards 3 --script-dir bad/x >bad.txt 2>&1
[ $? -eq 2 ] || fail "a script directory inside the result directory was accepted"
grep -q "inside the result directory" bad.txt || fail "no message for --script-dir inside OUT: $(cat bad.txt)"
"$bin" slurm "$src/tests/data/no_such.json" --shards 3 >bad.txt 2>&1
[ $? -eq 2 ] || fail "a missing config did not exit 2"

# A config whose empirical generator names its rows relative to the config (every arena config):
# the rows are copied beside the config's copy, so the array tasks read them there and the
# merged set is the single run's (the tasks failed before: no rows file beside the copy).
fake_config emp emp
"$bin" run emp/emp.json --out emp_single --threads 2 --quiet || fail "emp: single run failed"
"$bin" slurm emp/emp.json --shards 2 --out "$work/emp_out" --cpus 2 --time 0:10:00 >emp.txt 2>&1 ||
  fail "calbench slurm of the empirical config failed: $(cat emp.txt)"
cmp -s emp/fakes/cancer_lr_k2.rows.npy "$work/emp_out.slurm/fakes/cancer_lr_k2.rows.npy" ||
  fail "the rows file was not copied beside the config's copy"
for i in 1 2; do
  SLURM_ARRAY_TASK_ID=$i bash "$work/emp_out.slurm/shards.sbatch" >"emp$i.log" 2>&1 ||
    fail "emp: array task $i failed: $(cat "emp$i.log")"
done
bash "$work/emp_out.slurm/merge.sbatch" >emp_merge.log 2>&1 ||
  fail "emp: the merge failed: $(cat emp_merge.log)"
same_set emp_single "$work/emp_out" "an empirical fake's relative rows through the job scripts"
mkdir -p up
sed 's|"fakes/cancer_lr_k2.rows.npy"|"../emp/fakes/cancer_lr_k2.rows.npy"|' emp/emp.json >up/up.json
"$bin" validate up/up.json >/dev/null 2>&1 || fail "up/up.json does not validate"
"$bin" slurm up/up.json --shards 2 --out up_out >bad.txt 2>&1
[ $? -eq 2 ] || fail "a rows file outside the config's folder was accepted by calbench slurm"
grep -q "outside the config's folder" bad.txt || fail "no message for ../ rows: $(cat bad.txt)"
[ -e up_out.slurm ] && fail "a refused calbench slurm wrote its script directory"

finish
