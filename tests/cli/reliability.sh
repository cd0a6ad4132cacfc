#!/usr/bin/env bash
# The reliability audit's reproducers (issue #28), each must end with its documented status and
# message, lose nothing and stop in time:
#   - a symbolic or hard link planted at a run's lock or work directory is refused (exit 2) and
#     its target left untouched (docs/durability.md);
#   - the report step runs Python isolated: a numpy.py, matplotlib.py or calbench/ in the working
#     directory is never imported, by `run` nor by `eval --plot` (docs/python.md);
#   - an external command's output is capped, a setsid child does not outlive it, SIGINT stops
#     it within seconds and removes its temporaries (docs/external.md, "Limits").
#
# Usage: tests/cli/reliability.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_reliability usage="CALBENCH_BINARY SOURCE_DIR"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tiny="$src/tests/data/tiny.json"
cases=0
mounted=""
cleanup() {
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
  remove_work
}
trap cleanup EXIT
export CALBENCH_NO_REPORT=1

# expect_exit STATUS PHRASE NAME ARGS...: calbench ARGS exits STATUS, its stderr holds PHRASE.
expect_exit() {
  local want=$1 phrase=$2 name=$3
  shift 3
  cases=$((cases + 1))
  "$bin" "$@" >"$work/$name.out" 2>"$work/$name.err"
  local status=$?
  [ "$status" -eq "$want" ] || fail "$name: exit status $status, expected $want: $(cat "$work/$name.err")"
  [ -z "$phrase" ] || grep -qF -- "$phrase" "$work/$name.err" || fail "$name: stderr lacks \"$phrase\": $(cat "$work/$name.err")"
}

# ---- item 1: links planted beside OUT -----------------------------------------------------------
head -c 1400 /dev/urandom | base64 >victim.txt
cp victim.txt victim.orig
mkdir d
ln -s ../victim.txt d/.out3.lock
expect_exit 2 "it is a symbolic link, which calbench does not follow" symlinked_lock \
  run "$tiny" --out d/out3 --quiet
cmp -s victim.txt victim.orig || fail "symlinked_lock: the link's target was changed"
[ -e d/out3 ] && fail "symlinked_lock: the output directory was written"
rm d/.out3.lock

ln victim.txt d/.out4.lock
expect_exit 2 "hard links" hardlinked_lock run "$tiny" --out d/out4 --quiet
cmp -s victim.txt victim.orig || fail "hardlinked_lock: the linked file was changed"
rm d/.out4.lock

mkdir precious && echo keep >precious/file.txt
ln -s ../precious d/.out5.partial
expect_exit 2 "is not a directory (a symbolic link)" symlinked_work_dir run "$tiny" --out d/out5 --quiet
[ "$(cat precious/file.txt 2>/dev/null)" = keep ] || fail "symlinked_work_dir: precious/ was changed"
[ "$(ls precious)" = file.txt ] || fail "symlinked_work_dir: precious/ holds $(ls precious)"

# ---- item 2: Python isolated ----------------------------------------------------------------
python=${CALBENCH_PYTHON:-python3}
if command -v "$python" >/dev/null; then
  mkdir hostile hostile/calbench
  for module in numpy pandas matplotlib; do
    printf 'open("%s/ran_%s", "w").write("x")\n' "$work" "$module" >hostile/$module.py
  done
  printf 'open("%s/ran_calbench", "w").write("x")\n' "$work" >hostile/calbench/__init__.py
  cp "$tiny" hostile/cfg.json
  printf '0,0.6,0.4\n1,0.3,0.7\n0,0.8,0.2\n1,0.1,0.9\n' >hostile/rows.csv
  (cd hostile && CALBENCH_NO_REPORT= "$bin" run cfg.json --out o --quiet >/dev/null 2>../hostile_run.err)
  (cd hostile && CALBENCH_NO_REPORT= PYTHONPATH=.:: "$bin" eval rows.csv --plot plots \
    >/dev/null 2>../hostile_eval.err)
  cases=$((cases + 2))
  ran=$(ls ran_* 2>/dev/null)
  [ -z "$ran" ] || fail "the report step imported modules from the working directory: $ran"
  [ -f hostile/o/summary.json ] || fail "hostile: the run wrote no results: $(cat hostile_run.err)"
fi

# ---- item 5: parsing in linear time, special files refused at once --------------------------------
# 200,000 small objects in an array took 21.6 s (the callback parser's rescans); now well under
# a second of parsing: the run refuses the unknown key after reading it all.
python3 -c '
import json
print(json.dumps({"scenario": "estimator_bias", "filler": [{"a": i} for i in range(200000)]}))' >many_objects.json
SECONDS=0
expect_exit 2 "/filler: unknown key" many_objects validate many_objects.json
[ "$SECONDS" -lt 10 ] || fail "many_objects: validate took $SECONDS s"
mkfifo fifo.json fifo.csv
# A FIFO used to block forever: `timeout` turns a regression into a failed check, not a hang.
for args in "validate fifo.json" "run fifo.json --out o_fifo" "eval fifo.csv" "plan fifo.json"; do
  cases=$((cases + 1))
  SECONDS=0
  # shellcheck disable=SC2086  # the words of args
  timeout 20 "$bin" $args >/dev/null 2>fifo.err
  status=$?
  [ "$status" -eq 2 ] || fail "$args: exit $status, expected 2: $(cat fifo.err)"
  grep -qF "fifo.csv: cannot open the file (it is a FIFO, not a regular file)" fifo.err ||
    grep -qF "fifo.json: cannot open the file (it is a FIFO, not a regular file)" fifo.err ||
    fail "$args: $(cat fifo.err)"
  [ "$SECONDS" -lt 5 ] || fail "$args: took $SECONDS s"
done
expect_exit 2 "/dev/zero: cannot open the file (it is a character device, not a regular file)" \
  dev_zero validate /dev/zero
head -c 70000000 /dev/zero | tr '\0' ' ' >huge.json
expect_exit 2 "huge.json: cannot read the file (it has 70000000 bytes, more than calbench's limit of 67108864)" \
  huge validate huge.json
rm huge.json

# ---- item 12: plan's counts bounded, merge's shard fields checked ---------------------------------
plan_with() {
  printf '{"generator": {"family": "dirichlet", "classes": 2, "alpha": 2}, "estimator": {"name": "brier"},
   "question": {"width": 0.1%s}%s}\n' "$1" "$2"
}
plan_with '' ', "replicates": 1e9' >plan_reps.json
expect_exit 2 "/replicates: replicates = 1000000000: must be <= 100000" plan_reps plan plan_reps.json
plan_with ', "interval": "percentile", "resamples": 1e9' '' >plan_resamples.json
expect_exit 2 "/question/resamples: resamples = 1000000000: must be <= 100000" plan_resamples \
  plan plan_resamples.json
"$bin" run "$tiny" --shard 1/2 --out shard1 --quiet --threads 1 || fail "shard 1 failed"
"$bin" run "$tiny" --shard 2/2 --out shard2 --quiet --threads 1 || fail "shard 2 failed"
cp -r shard2 shard2_saved
expect_exit 2 "is the shard shard2: merge replaces its output whole" merge_into_shard \
  merge shard1 shard2 --out shard2 --quiet
diff -r shard2 shard2_saved >/dev/null || fail "merge_into_shard: the shard was changed"
python3 -c '
import json; d = json.load(open("shard2/shard.json")); d["shard"] = 2.7
json.dump(d, open("shard2/shard.json", "w"))'
expect_exit 2 "shard.json: /shard: expected an integer >= 1, found 2.7" merge_fraction \
  merge shard1 shard2 --out merged --quiet
python3 -c '
import json; d = json.load(open("shard2/shard.json")); d["shard"] = "2"
json.dump(d, open("shard2/shard.json", "w"))'
expect_exit 2 "shard.json: /shard: expected an integer >= 1, found \"2\"" merge_string \
  merge shard1 shard2 --out merged --quiet
rm -r shard2 && cp -r shard2_saved shard2 && rm shard2/journal.bin
expect_exit 2 "journal.bin: the shard's journal is missing" merge_no_journal \
  merge shard1 shard2 --out merged --quiet
# A bit flipped in a finished shard's journal is corruption, named with the file (it was
# reported as "an unfinished shard"); the merge only reads the shard (it used to cut the
# journal short at the damaged record).
rm -r shard2 && cp -r shard2_saved shard2
flip_byte() {
  python3 -c '
import sys
path, at = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, "rb").read())
at = at if at >= 0 else len(data) // 2
data[at] ^= 0x10
open(path, "wb").write(bytes(data))' "$@"
}
flip_byte shard2/journal.bin -1
cp shard2/journal.bin flipped.bin
expect_exit 2 "shard2/journal.bin: the journal is corrupt: the record at byte" merge_bit_flip \
  merge shard1 shard2 --out merged --quiet
cmp -s shard2/journal.bin flipped.bin || fail "merge_bit_flip: the shard's journal was changed"
cp shard2_saved/journal.bin shard2/journal.bin
flip_byte shard2/journal.bin 20
expect_exit 2 "shard2/journal.bin: the journal is corrupt: its header" merge_header_flip \
  merge shard1 shard2 --out merged --quiet
[ "$(stat -c %s shard2/journal.bin)" = "$(stat -c %s shard2_saved/journal.bin)" ] ||
  fail "merge_header_flip: the shard's journal was replaced"
[ -e merged ] && fail "a failed merge wrote its output"

# ---- item 11: nothing calbench replaces holds a file it did not write -------------------------------
"$bin" run "$tiny" --out mine --quiet --threads 1 || fail "the run into mine failed"
echo "my notes" >mine/notes.txt
expect_exit 2 "holds files calbench did not write (notes.txt)" foreign_file run "$tiny" --out mine --quiet
[ "$(cat mine/notes.txt)" = "my notes" ] || fail "foreign_file: notes.txt was lost"
rm mine/notes.txt
# A rerun into a finished set of calbench's own files: refused without --overwrite (also with
# --resume and no journal), the set left byte for byte; replaced with it.
cp -r mine mine_saved
expect_exit 2 "already holds a finished calbench result set" rerun_refused \
  run "$tiny" --out mine --quiet --threads 1
grep -qF -- "pass --overwrite to replace it" rerun_refused.err || fail "rerun_refused: no hint"
expect_exit 2 "already holds a finished calbench result set" rerun_resume_refused \
  run "$tiny" --out mine --quiet --threads 1 --resume
rm -r shard2 && cp -r shard2_saved shard2
expect_exit 2 "already holds a finished calbench result set" merge_refused \
  merge shard1 shard2 --out mine --quiet
diff -r mine mine_saved >/dev/null || fail "rerun_refused: the finished set was changed"
[ -z "$(ls -A | grep -F .mine.)" ] || fail "rerun_refused: left $(ls -A | grep -F .mine.)"
expect_exit 0 "" rerun_overwrite run "$tiny" --out mine --quiet --threads 1 --overwrite
cmp -s mine/cells.csv mine_saved/cells.csv || fail "rerun_overwrite: other cells.csv"
mkdir scripts && echo '{"mine": 1}' >scripts/config.json
expect_exit 2 "already holds config.json with other contents" slurm_overwrite \
  slurm "$tiny" --shards 2 --out sl --script-dir scripts
[ "$(cat scripts/config.json)" = '{"mine": 1}' ] || fail "slurm_overwrite: config.json was changed"
echo keep >cases.partial
expect_exit 2 "cases.partial exists" export_partial export-cases cases
[ "$(cat cases.partial)" = keep ] || fail "export_partial: cases.partial was removed"
if [ "$(id -u)" -ne 0 ]; then
  mkdir readonly && chmod 555 readonly
  expect_exit 2 "--out readonly/plan.json" plan_readonly plan "$src/configs/plan/width_example.json" \
    --out readonly/plan.json --quiet
fi

# ---- item 9: a time estimate before long work, SIGINT honoured in the truth phase -------------------
expect_exit 0 "" validate_estimate validate "$tiny"
grep -qE "^estimated time: up to about [0-9]+ s on [0-9]+ threads" validate_estimate.out ||
  fail "validate prints no time estimate: $(cat validate_estimate.out)"
# K = 300 with an asymmetric alpha (no exchangeable classes): a Monte Carlo truth of minutes
# (126 s before #28, when a stop waited for it).
python3 -c '
import json
K = 300
print(json.dumps({"scenario": "estimator_bias", "replicates": 2, "sample_size": 100,
  "generator": {"family": "dirichlet", "classes": K, "alpha": [0.3 + k / K for k in range(K)],
                "miscalibration": {"map": "temperature", "temperature": 0.8}},
  "estimators": [{"name": "accuracy"}], "sweep": {"replicates": [2, 3, 4]}}))' >long_truth.json
"$bin" run long_truth.json --out o_long --threads 2 2>long_truth.err >/dev/null &
pid=$!
sleep 2
SECONDS=0
kill -INT "$pid"
wait "$pid"
status=$?
cases=$((cases + 1))
[ "$status" -eq 130 ] || fail "SIGINT during the truth: exit $status, expected 130: $(cat long_truth.err)"
# Within a second of work; 3 s of wall time on a loaded machine.
[ "$SECONDS" -le 3 ] || fail "SIGINT during the truth: took $SECONDS s to stop"
grep -q "calbench: pre-flight: this run may take up to about" long_truth.err ||
  fail "the long run printed no time estimate: $(cat long_truth.err)"

# kde_canonical's O(n^2 K) pass (about a minute here at n = 20,000) stops within a second of
# SIGINT in eval (issue #28 leftovers; the Python side: python/tests/test_bindings.py).
python3 -c '
import random
random.seed(2)
print("label,p0,p1,p2")
for i in range(20000):
    a = [random.random() + 0.05 for _ in range(3)]; s = sum(a)
    print(",".join([str(random.randrange(3))] + ["%.6f" % (x / s) for x in a[:2]] +
                   ["%.6f" % (1 - sum(round(x / s, 6) for x in a[:2]))]))' >kde_big.csv
# eval keeps SIGINT's default action (it writes nothing until it ends: stdout and atomic --plot
# files), so a Ctrl-C ends it at once; a background job of a script inherits SIGINT ignored,
# which python3 restores here, as a terminal's foreground job has it.
python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$bin" eval kde_big.csv --estimators kde_canonical \
  --resamples 10 >/dev/null 2>kde_eval.err &
pid=$!
sleep 1.5
SECONDS=0
kill -INT "$pid"
wait "$pid"
status=$?
cases=$((cases + 1))
[ "$status" -eq 130 ] || fail "SIGINT during kde_canonical in eval: exit $status, expected 130: $(cat kde_eval.err)"
[ "$SECONDS" -le 2 ] || fail "SIGINT during kde_canonical in eval: took $SECONDS s to stop"

# ---- item 8: check tells a malformed file (2) from a regression (1) -------------------------------
"$bin" run "$tiny" --out base --quiet --threads 1 || fail "the tiny run failed"
# mutate NAME PYTHON_STATEMENT: base/summary.json with `d` changed, as NAME.json.
mutate() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open("base/summary.json"))
cell = d["cells"][1]
est = next(iter(cell["estimators"].values()))
exec(sys.argv[2])
open(sys.argv[1] + ".json", "w").write(json.dumps(d) if not isinstance(d, str) else d)
PY
}
mutate no_estimators 'del cell["estimators"]'
mutate se_bias_huge 'est["se_bias"] = 1e308'
mutate sd_negative 'est["sd"] = -1'
mutate index_fraction 'cell["index"] = 2.7'
mutate index_string 'cell["index"] = "2"'
mutate cell_number 'd["cells"][1] = 3'
mutate replicates_zero 'est["replicates"] = 0'
mutate truncated 'd = json.dumps(d)[:500]'
for bad in no_estimators se_bias_huge sd_negative index_fraction index_string cell_number \
  replicates_zero truncated; do
  for side in results baseline; do
    if [ $side = results ]; then args=("$bad.json" --baseline base/summary.json)
    else args=(base --baseline "$bad.json"); fi
    expect_exit 2 "$bad.json" "check_${bad}_$side" check "${args[@]}"
  done
done
grep -qF "/cells/1/estimators: required key is missing" check_no_estimators_results.err ||
  fail "check: the missing estimators are not named: $(cat check_no_estimators_results.err)"
grep -qF "/se_bias: se_bias = 1e+308 does not fit" check_se_bias_huge_results.err ||
  fail "check: se_bias 1e308 is not named: $(cat check_se_bias_huge_results.err)"
expect_exit 0 "" check_same check base --baseline base/summary.json

# ---- items 3 and 4: external commands ---------------------------------------------------------
# ext_config LABEL COMMAND_JSON [EXTRA_MEMBERS]
ext_config() {
  printf '{"scenario": "estimator_bias", "replicates": 2, "sample_size": 50,
    "generator": {"family": "dirichlet", "classes": 2, "alpha": 1},
    "estimators": [{"name": "external", "label": "%s", "target": "accuracy",
                    "command": %s%s}]}\n' "$1" "$2" "${3:+, $3}"
}
mkdir tmp
export TMPDIR="$work/tmp"

ext_config flood_err '["sh", "-c", "yes err >&2"]' '"max_output": 4096' >flood_err.json
SECONDS=0
expect_exit 1 'external estimator "flood_err", cell 0' flood_err run flood_err.json --out o_flood_err --quiet
grep -qF "wrote more than max_output = 4096 bytes to its standard error and was killed" \
  "$work/flood_err.err" || fail "flood_err: no cap message: $(cat "$work/flood_err.err")"
ext_config flood_out '["sh", "-c", "yes 0.5"]' >flood_out.json
expect_exit 1 "wrote more than max_output = 67108864 bytes to its standard output" flood_out \
  run flood_out.json --out o_flood_out --quiet
[ "$SECONDS" -lt 60 ] || fail "the capped commands took $SECONDS s"
ext_config big_cap '["true"]' '"max_output": 1e12' >big_cap.json
expect_exit 2 "/estimators/0/max_output: max_output = 1000000000000: must be <= 1073741824" \
  big_cap validate big_cap.json

# A setsid child (its own session and group) does not escape the timeout.
marker=317
ext_config escape "[\"sh\", \"-c\", \"setsid sleep $marker & sleep $marker\"]" '"timeout": 1' >escape.json
SECONDS=0
expect_exit 1 "did not finish within the timeout of 1 s" escape run escape.json --out o_escape --quiet
[ "$SECONDS" -lt 20 ] || fail "escape: the timeout took $SECONDS s"
sleep 0.3
pgrep -f "sleep $marker" >/dev/null && fail "escape: a sleep $marker outlived the command"
# A background job the command leaves behind does not outlive it either.
ext_config leftover "[\"sh\", \"-c\", \"sleep $marker.5 >/dev/null 2>&1 & echo 0.5 0.5\"]" >leftover.json
expect_exit 0 "" leftover run leftover.json --out o_leftover --quiet
sleep 0.3
pgrep -f "sleep $marker.5" >/dev/null && fail "leftover: a background sleep outlived the command"

# SIGINT while a command runs: forwarded, the run stops within seconds (130), nothing remains.
ext_config interrupted "[\"sh\", \"-c\", \"sleep $marker.75\"]" >interrupted.json
"$bin" run interrupted.json --out o_int --quiet 2>interrupted.err &
pid=$!
for _ in $(seq 100); do pgrep -f "sleep $marker.75" >/dev/null && break; sleep 0.05; done
SECONDS=0
kill -INT "$pid"
wait "$pid"
status=$?
cases=$((cases + 1))
[ "$status" -eq 130 ] || fail "SIGINT during an external command: exit $status, expected 130: $(cat interrupted.err)"
[ "$SECONDS" -le 4 ] || fail "SIGINT during an external command: took $SECONDS s"
pgrep -f "sleep $marker.75" >/dev/null && fail "SIGINT: the command outlived calbench"
left=$(ls -A tmp)
[ -z "$left" ] || fail "temporaries left in TMPDIR: $left"

# ---- item 5 (leftovers): temporaries after kill -9 carry their pid and are removed -------------
# A run killed while its external command runs leaves its temporary directory (SIGKILL runs no
# destructor); its name holds the pid, and the next calbench to make one removes it.
# (exec: the sleep is the command itself, which PR_SET_PDEATHSIG ends with calbench; a
# grandchild would outlive a SIGKILL, docs/external.md "Limits".)
ext_config killed "[\"sh\", \"-c\", \"exec sleep $marker.9\"]" >killed.json
"$bin" run killed.json --out o_killed --quiet 2>/dev/null &
pid=$!
for _ in $(seq 200); do pgrep -f "sleep $marker.9" >/dev/null && break; sleep 0.05; done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
sleep 0.3
pgrep -f "sleep $marker.9" >/dev/null && fail "kill -9: the command outlived calbench"
cases=$((cases + 1))
ls tmp | grep -q -- "^calbench-[a-z]*-$pid-" || fail "kill -9: no temporary named with pid $pid: $(ls -A tmp)"
dead=$(sh -c 'echo $$')  # a pid that has just ended
mkdir "tmp/calbench-cell-$dead-abcdef" && echo x >"tmp/calbench-cell-$dead-abcdef/p_0.npy"
mkdir "tmp/calbench-cell-$$-ghijkl"  # this shell's: alive, kept
mkdir tmp/calbench-mine               # no pid: not calbench's pattern, kept
expect_exit 0 "" after_kill run leftover.json --out o_after_kill --quiet
[ "$(ls -A tmp | sort | tr '\n' ' ')" = "calbench-cell-$$-ghijkl calbench-mine " ] ||
  fail "after_kill: TMPDIR holds $(ls -A tmp)"
rm -r "tmp/calbench-cell-$$-ghijkl" tmp/calbench-mine
# An atomic write's temporary, TARGET.tmp-calbench-PID-XXXXXX: removed by the next write of
# TARGET when PID is gone; nothing else is (tests/cli/audit.sh, N1).
mkdir atomic
echo half >"atomic/submit.sh.tmp-calbench-$dead-abcdef"
echo mine >"atomic/notes.tmp-$$-0"
expect_exit 0 "" atomic_leftover slurm "$tiny" --shards 2 --out atomic/o --script-dir atomic
[ -e "atomic/submit.sh.tmp-calbench-$dead-abcdef" ] && fail "atomic_leftover: the dead writer's temporary stayed"
[ -e "atomic/notes.tmp-$$-0" ] || fail "atomic_leftover: a live pid's file was removed"
[ -f atomic/submit.sh ] || fail "atomic_leftover: slurm wrote no submit.sh: $(ls atomic)"
# export-cases killed: its DIR.partial holds its pid; a later export-cases removes it. A
# DIR.partial without the marker (a user's) stays refused (item 11 above).
mkdir cases2.partial && echo "$dead" >cases2.partial/.calbench-export-cases.pid
expect_exit 0 "" export_after_kill export-cases cases2
[ -e cases2.partial ] && fail "export_after_kill: cases2.partial is still there"
[ -e cases2/.calbench-export-cases.pid ] && fail "export_after_kill: the marker was exported"
mkdir cases3.partial && echo "$$" >cases3.partial/.calbench-export-cases.pid
expect_exit 2 "cases3.partial exists" export_live export-cases cases3

# ---- item 4 (leftovers): fit, plan and export-cases on a read-only file system: exit 2 ----------
ro=$work/ro
mkdir "$ro"
if mount -t tmpfs -o size=1m tmpfs "$ro" 2>/dev/null; then
  mounted=$ro
  mkdir "$ro/empty" && mount -o remount,ro "$ro" || fail "cannot remount $ro read-only"
  printf 'label,p0,p1,p2\n' >model.csv
  python3 -c '
import random
random.seed(1)
for i in range(400):
    a = [random.random() + 0.1 for _ in range(3)]; s = sum(a); p = [x / s for x in a]
    y = max(range(3), key=lambda k: p[k]) if random.random() < 0.7 else random.randrange(3)
    print(",".join([str(y)] + ["%.6f" % x for x in p]))' >>model.csv
  expect_exit 2 "--out $ro/fake.json: cannot write $ro/fake.json ($ro: Read-only file system)" \
    fit_readonly fit model.csv --renormalize --out "$ro/fake.json"
  expect_exit 2 "--out $ro/sub/plan.json: cannot write" plan_readonly_fs \
    plan "$src/configs/plan/width_example.json" --out "$ro/sub/plan.json" --quiet
  expect_exit 2 "Read-only file system" export_readonly export-cases "$ro/empty"
  expect_exit 2 "Read-only file system" export_readonly_new export-cases "$ro/new"
  [ "$(ls -A "$ro")" = empty ] || fail "read-only: something was written: $(ls -A "$ro")"
  umount "$ro" && mounted=""
else
  echo "cli_reliability: note: cannot mount a tmpfs here; the read-only cases were not run"
fi

finish "$cases cases"
