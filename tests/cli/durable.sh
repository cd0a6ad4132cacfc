#!/usr/bin/env bash
# Runs that survive (docs/durability.md), through the command line:
#   - kill -9 at several moments (before the first journal record, after it, twice in a row),
#     SIGINT and SIGTERM, then `--resume` on another thread count: every result file but
#     run.json (the volatile one, DESIGN.md §4) is byte-identical to an uninterrupted run,
#     for estimator_bias (one journal stage) and decision (three stages);
#   - a second run on a directory that a run holds is refused (exit 2), the first completes;
#   - an existing journal without --resume is refused, --restart discards it;
#   - `--out ""`, an output path under a file and a directory that is not a result set exit 2;
#   - a full disk (a small tmpfs, when this user may mount one) while the results are written,
#     and while the journal is: exit 1, the old set untouched, no partial set and no temporary
#     file; once there is room, --resume completes to the same bytes.
# After every completed run nothing but the result directories is left in the work directory.
#
# Usage: tests/cli/durable.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_durable usage="CALBENCH_BINARY SOURCE_DIR" fail_fast=1
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bias="$src/tests/data/durable.json"
decision="$src/tests/data/durable_decision.json"

mounted=""
cleanup() {
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
  remove_work
}
trap cleanup EXIT

. "$src/tests/cli/result_sets.sh"

# Nothing but result directories in DIR: no lock, no work directory, no temporary file.
no_stray() {
  local dir=$1 what=$2
  stray=$(find "$dir" -maxdepth 1 -name '.*' ! -name . ; find "$dir" -name '*.tmp-*')
  [ -z "$stray" ] || fail "$what: left behind: $stray"
}

# Waits until FILE has at least MIN bytes while PID runs; status 1 when PID ended first.
wait_for_size() {
  local file=$1 min=$2 pid=$3
  for _ in $(seq 1 3000); do
    kill -0 "$pid" 2>/dev/null || return 1
    size=$(stat -c %s "$file" 2>/dev/null || echo -1)
    [ "$size" -ge "$min" ] && return 0
    sleep 0.01
  done
  return 1
}

# Starts a run in the background: sets $pid.
start() {
  local config=$1 out=$2 threads=$3
  shift 3
  "$bin" run "$config" --out "$out" --threads "$threads" --quiet "$@" 2>"$out.err" &
  pid=$!
}

# Kills the run when its journal (in the work directory beside OUT) has MIN bytes.
kill_at() {
  local out=$1 min=$2 signal=$3 what=$4
  local journal
  journal="$(dirname "$out")/.$(basename "$out").partial/journal.bin"
  wait_for_size "$journal" "$min" "$pid" ||
    fail "$what: the run ended before its journal reached $min bytes (make the config longer)"
  kill "-$signal" "$pid"
  wait "$pid"
  status=$?
}

resume() {
  local config=$1 out=$2 threads=$3
  "$bin" run "$config" --out "$out" --threads "$threads" --quiet --resume 2>"$out.resume.err"
  status=$?
  [ "$status" -eq 0 ] || fail "resume of $out exited $status: $(cat "$out.resume.err")"
}

mkdir runs
"$bin" run "$bias" --out runs/ref --threads 2 --quiet || fail "reference run failed"
"$bin" run "$decision" --out runs/ref_decision --threads 2 --quiet ||
  fail "reference decision run failed"
no_stray runs "reference runs"

# The journal header is about 80 bytes; a journal larger than 200 holds task records.
header=1
records=200

# kill -9 before any record, after some, and twice in a row; resumed on 1 thread.
start "$bias" runs/k1 2
kill_at runs/k1 $header KILL "kill -9 at the start"
[ "$status" -eq 137 ] || fail "kill -9 at the start: the run exited $status"
resume "$bias" runs/k1 1
same_set runs/ref runs/k1 "kill -9 at the start"

start "$bias" runs/k3 1
kill_at runs/k3 $records KILL "kill -9, first time"
size=$(stat -c %s runs/.k3.partial/journal.bin)
start "$bias" runs/k3 1 --resume
kill_at runs/k3 $((size + records)) KILL "kill -9 while resuming"
resume "$bias" runs/k3 2
same_set runs/ref runs/k3 "kill -9 twice"

# A torn last record (a kill inside write(2)) is dropped, the records before it are kept.
start "$bias" runs/k4 2
kill_at runs/k4 $records KILL "kill -9 before tearing"
truncate -s -3 runs/.k4.partial/journal.bin
"$bin" run "$bias" --out runs/k4 --threads 1 --resume 2>runs/k4.resume.err >/dev/null ||
  fail "resume after a torn record failed: $(cat runs/k4.resume.err)"
grep -q "torn last record" runs/k4.resume.err || fail "the torn record was not reported"
same_set runs/ref runs/k4 "a torn last record"

# SIGINT and SIGTERM stop cleanly (130, 143) and say how to resume.
for signal in INT TERM; do
  out=runs/s$signal
  start "$bias" $out 2
  kill_at $out $records $signal "SIG$signal"
  expected=$([ $signal = INT ] && echo 130 || echo 143)
  [ "$status" -eq "$expected" ] || fail "SIG$signal: exit $status, expected $expected"
  grep -q "stopped by SIG$signal" $out.err || fail "SIG$signal: no stop message: $(cat $out.err)"
  grep -q -- "--resume" $out.err || fail "SIG$signal: no resume command: $(cat $out.err)"
  [ -e $out ] && fail "SIG$signal: a result set appeared"
  [ -e runs/.s$signal.partial/set ] && fail "SIG$signal: a staged set was left"
  # docs/durability.md: a header of 16 bytes and the identity, then per estimator_bias task
  # 20 bytes of framing, 24 of vector lengths and 8 per estimator (5 here): 84 bytes.
  journal=runs/.s$signal.partial/journal.bin
  tasks=$(grep -o '; [0-9]* finished tasks' $out.err | grep -o '[0-9][0-9]*')
  identity=$(od -An -tu4 -j8 -N4 $journal | tr -d ' ')
  [ "$(stat -c %s $journal)" -eq $((16 + identity + 84 * tasks)) ] ||
    fail "SIG$signal: the journal has $(stat -c %s $journal) bytes, not 16 + $identity + 84 x $tasks"
  # Without --resume the journal is not silently thrown away.
  "$bin" run "$bias" --out $out --quiet 2>$out.again.err
  [ $? -eq 2 ] || fail "SIG$signal: a run without --resume over a journal did not exit 2"
  grep -q -- "--resume continues it" $out.again.err || fail "no hint: $(cat $out.again.err)"
done
# Another config's journal is refused; the right config resumes it.
"$bin" run "$decision" --out runs/sINT --quiet --resume 2>runs/mismatch.err
[ $? -eq 2 ] || fail "resuming another config's journal did not exit 2"
grep -q "belongs to another run" runs/mismatch.err || fail "no mismatch message: $(cat runs/mismatch.err)"
resume "$bias" runs/sINT 2
same_set runs/ref runs/sINT "SIGINT"
# --restart discards a journal; the run is complete and identical.
"$bin" run "$bias" --out runs/sTERM --threads 2 --quiet --restart || fail "--restart failed"
same_set runs/ref runs/sTERM "SIGTERM and --restart"

# decision: three journal stages (exact values, realised utilities, recalibrators).
start "$decision" runs/d1 2
kill_at runs/d1 $records KILL "decision kill -9"
resume "$decision" runs/d1 1
same_set runs/ref_decision runs/d1 "decision kill -9"
no_stray runs "after the resumed runs"

# Two runs on one directory: the second is refused while the first holds the lock.
start "$bias" runs/lock 2
journal=runs/.lock.partial/journal.bin
wait_for_size $journal $header $pid || fail "lock: the first run ended too early"
"$bin" run "$bias" --out runs/lock --quiet 2>runs/lock2.err
[ $? -eq 2 ] || fail "a second run on a locked directory did not exit 2"
grep -q "is writing" runs/lock2.err || fail "no lock message: $(cat runs/lock2.err)"
wait $pid || fail "the first run failed while a second was refused: $(cat runs/lock.err)"
same_set runs/ref runs/lock "the locked run"
rm -f runs/*.err
no_stray runs "after the lock test"

# Bad output directories: exit 2 before any computation, nothing written.
"$bin" run "$bias" --out "" --quiet 2>empty.err
[ $? -eq 2 ] || fail "--out \"\" did not exit 2"
echo text >afile
"$bin" run "$bias" --out afile/sub --quiet 2>under_file.err
[ $? -eq 2 ] || fail "--out under a file did not exit 2"
grep -q "afile" under_file.err || fail "the message does not name the path: $(cat under_file.err)"
mkdir notes && echo mine >notes/thesis.tex
"$bin" run "$bias" --out notes --quiet 2>notes.err
[ $? -eq 2 ] || fail "a directory that is not a result set was not refused"
[ "$(cat notes/thesis.tex)" = mine ] || fail "the user's file was touched"
[ "$(ls -A notes)" = thesis.tex ] || fail "something was written into notes: $(ls -A notes)"

# A full disk, on a small tmpfs (root, or a user allowed to mount).
disk=$work/disk
mkdir "$disk"
if mount -t tmpfs -o size=200k tmpfs "$disk" 2>/dev/null; then
  mounted=$disk
  # Results do not fit (replicates.csv is ~1 MB); the journal (~380 kB) does not either at
  # 200 kB: the journal fails first. Then at 600 kB the journal fits but the results do not.
  "$bin" run "$src/tests/data/tiny.json" --out "$disk/out" --quiet || fail "tiny run on tmpfs"
  cp -r "$disk/out" old_set
  "$bin" run "$bias" --out "$disk/out" --threads 2 --quiet --restart --overwrite 2>full1.err
  [ $? -eq 1 ] || fail "a full disk during the journal did not exit 1"
  grep -q "No space left on device" full1.err || fail "no ENOSPC message: $(cat full1.err)"
  same_set old_set "$disk/out" "the old set after a full disk"
  [ -z "$(find "$disk" -name '*.tmp-*')" ] || fail "temporary files on the full disk"
  [ -e "$disk/.out.partial/set" ] && fail "a staged set was left on the full disk"
  [ -e "$disk/.out.lock" ] && fail "the lock file was left on the full disk"
  mount -o remount,size=600k "$disk" || fail "cannot grow the tmpfs"
  "$bin" run "$bias" --out "$disk/out" --threads 2 --quiet --resume 2>full2.err
  [ $? -eq 1 ] || fail "a full disk while writing the results did not exit 1: $(cat full2.err)"
  grep -q "No space left on device" full2.err || fail "no ENOSPC message: $(cat full2.err)"
  same_set old_set "$disk/out" "the old set after a full disk while writing"
  [ -z "$(find "$disk" -name '*.tmp-*')" ] || fail "temporary files after writing failed"
  [ -e "$disk/.out.partial/set" ] && fail "a partial set was left"
  [ -s "$disk/.out.partial/journal.bin" ] || fail "the journal was not kept for --resume"
  mount -o remount,size=8m "$disk" || fail "cannot grow the tmpfs"
  "$bin" run "$bias" --out "$disk/out" --threads 1 --quiet --resume 2>full3.err ||
    fail "resume once there is room failed: $(cat full3.err)"
  same_set runs/ref "$disk/out" "resumed after a full disk"
  no_stray "$disk" "after the full disk"
  umount "$disk" && mounted=""
else
  echo "cli_durable: note: cannot mount a tmpfs here; the full-disk cases were not run"
fi

finish
