#!/usr/bin/env bash
# calbench slurm on a real one-node Slurm cluster (scripts/slurm-local.sh, docs/cluster.md):
# `calbench slurm CONFIG --shards 3 --submit` submits the job array and the merge job; array
# task 1 is requeued while it runs (`scontrol requeue`, what preemption does: SIGTERM, then the
# task runs again) and continues from its journal; the merge job runs once the array has
# succeeded, and the merged set equals one `calbench run` byte for byte but run.json.
#
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge (scripts/setup.sh installs
# them); without them it is skipped (exit 77).
# Usage: tests/cli/slurm_cluster.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_slurm_cluster usage="CALBENCH_BINARY SOURCE_DIR" fail_fast=1
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[ "$(id -u)" -eq 0 ] || skip "slurmd needs root"
for p in slurmctld slurmd slurm-client munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    skip "package $p is not installed (scripts/setup.sh tests installs it)"
done

state="$work/cluster"
cleanup() {
  "$src/scripts/slurm-local.sh" stop "$state" || true
  remove_work
}
trap cleanup EXIT
# The cluster's last log lines with every failure.
fail_context() {
  [ -d "$state" ] && tail -n 5 "$state"/*.log
}

. "$src/tests/cli/result_sets.sh"

# Two free TCP ports in a row for slurmctld and slurmd (another cluster may use 6817).
port=$(python3 -c '
import socket
for _ in range(100):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); port = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", port + 1)); print(port); break
    except OSError:
        pass
    finally:
        a.close(); b.close()
') || fail "no free ports"
env_line=$(CALBENCH_SLURM_PORT=$port "$src/scripts/slurm-local.sh" start "$state") ||
  fail "the cluster did not start"
eval "$env_line"

# durable.json: 1,000 replicates of 3 cells, long enough for a shard to be requeued mid-run.
config="$src/tests/data/durable.json"
export CALBENCH_NO_REPORT=1  # sbatch passes the environment to the jobs
"$bin" run "$config" --out single --threads 2 --quiet || fail "single run failed"

out="$work/it's a dir/merged"  # a blank and a quote, through sbatch's #SBATCH parsing
"$bin" slurm "$config" --shards 3 --out "$out" --cpus 1 --time 0:10:00 --submit >submit.txt 2>&1 ||
  fail "calbench slurm --submit failed: $(cat submit.txt)"
array=$(sed -n 's/.*job array \([0-9]*\) .*/\1/p' submit.txt)
merge=$(sed -n 's/.*merge as job \([0-9]*\).*/\1/p' submit.txt)
[ -n "$array" ] && [ -n "$merge" ] || fail "no job ids in: $(cat submit.txt)"

# Requeue array task 1 once its journal holds some records; Slurm holds a requeued job back
# (BeginTime) for a while, so its start time is set to now.
journal="$work/it's a dir/.merged.shard-1-of-3.partial/journal.bin"
for _ in $(seq 1 600); do
  [ "$(stat -c %s "$journal" 2>/dev/null || echo 0)" -ge 2000 ] && break
  sleep 0.05
done
[ -f "$journal" ] || fail "array task 1 wrote no journal"
scontrol requeue "${array}_1" || fail "scontrol requeue ${array}_1 failed"
for _ in $(seq 1 200); do
  [ "$(squeue --noheader --jobs "${array}_1" --format=%T 2>/dev/null)" = PENDING ] && break
  sleep 0.05
done
# Release it only once the first instance has stopped and slurmd has finished with it: released
# at once, slurmd may still be killing the old instance and refuses the launch ("Job N already
# killed, do not launch batch job"), which fails the task (seen once under load in a full run).
log="$out.slurm/logs/shard-1.out"
for _ in $(seq 1 400); do
  grep -q "stopped by SIGTERM" "$log" 2>/dev/null && ! pgrep -f -- "--shard 1/3" >/dev/null && break
  sleep 0.05
done
sleep 1
scontrol update JobId="${array}_1" StartTime=now || fail "cannot release the requeued task"

for _ in $(seq 1 1200); do
  [ -z "$(squeue --noheader --jobs "$array,$merge" 2>/dev/null)" ] && break
  sleep 0.1
done
[ -z "$(squeue --noheader --jobs "$array,$merge" 2>/dev/null)" ] ||
  fail "the jobs did not finish in 120 s: $(squeue)"
scontrol show job "$merge" | grep -q "JobState=COMPLETED" ||
  fail "the merge job did not complete: $(scontrol show job "$merge" | grep JobState)"
grep -q "stopped by SIGTERM" "$log" || fail "array task 1 was not stopped by the requeue: $(cat "$log")"
grep -q "resuming .*: [1-9][0-9]* finished tasks in the journal" "$log" ||
  fail "the requeued task did not resume its journal: $(cat "$log")"
same_set single "$out" "3 shards through Slurm (one requeued), merged"

finish
