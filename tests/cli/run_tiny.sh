#!/usr/bin/env bash
# Smoke run of `calbench run` on tests/data/tiny.json (DESIGN.md §4, §5): the result files are
# byte-identical on 1 and 2 threads, no temporary file is left behind, cells.csv and
# replicates.csv have one row per (cell, estimator) and (cell, replicate, estimator), and
# `calbench validate` lists the four cells.
#
# Usage: tests/cli/run_tiny.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_run_tiny usage="CALBENCH_BINARY SOURCE_DIR" fail_fast=1
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
config="$src/tests/data/tiny.json"

# tiny.json: 2 sample sizes x 2 temperatures, 5 estimators, 20 replicates.
cells=4
estimators=5
replicates=20

"$bin" run "$config" --threads 1 --out "$work/t1" --quiet >"$work/t1.out" 2>"$work/t1.err"
status=$?
[ "$status" -eq 0 ] || fail "run --threads 1 exited $status: $(cat "$work/t1.err")"
[ -s "$work/t1.out" ] && fail "run --quiet printed to stdout: $(cat "$work/t1.out")"
[ -s "$work/t1.err" ] && fail "run --quiet printed to stderr: $(cat "$work/t1.err")"

"$bin" run "$config" --threads 2 --out "$work/t2" >"$work/t2.out" 2>"$work/t2.err"
status=$?
[ "$status" -eq 0 ] || fail "run --threads 2 exited $status: $(cat "$work/t2.err")"
grep -q "^wrote $work/t2 ($cells cells" "$work/t2.out" ||
  fail "run without --quiet did not report what it wrote: $(cat "$work/t2.out")"

for file in config.resolved.json summary.json cells.csv replicates.csv; do
  [ -f "$work/t1/$file" ] || fail "$file missing after run --threads 1"
  [ -f "$work/t2/$file" ] || fail "$file missing after run --threads 2"
  cmp "$work/t1/$file" "$work/t2/$file" ||
    fail "$file differs between 1 and 2 threads"
done
for dir in t1 t2; do
  [ -f "$work/$dir/run.json" ] || fail "run.json missing in $dir"
done

leftovers=$(find "$work" -name '*.tmp-*')
[ -z "$leftovers" ] || fail "temporary files left behind: $leftovers"

rows=$(table "$work/t1/cells.csv" | wc -l)
[ "$rows" -eq $((1 + cells * estimators)) ] ||
  fail "cells.csv has $rows lines, expected a header and $((cells * estimators)) rows"
table "$work/t1/cells.csv" | head -n 1 | grep -q '^cell,' || fail "cells.csv has no header line"
# Every CSV starts with its header line, no comment lines (pandas.read_csv(path) with no
# options); the meta block is summary.json's.
for file in cells.csv replicates.csv; do
  grep -q '^#' "$work/t1/$file" && fail "$file: has comment lines"
  head -n 1 "$work/t1/$file" | grep -q '^cell,' || fail "$file: line 1 is not the header"
done
grep -Eq '"config_hash": "[0-9a-f]+"' "$work/t1/summary.json" || fail "summary.json: no config hash"
rows=$(table "$work/t1/replicates.csv" | wc -l)
[ "$rows" -eq $((1 + cells * replicates * estimators)) ] ||
  fail "replicates.csv has $rows lines, expected $((1 + cells * replicates * estimators))"

"$bin" validate "$config" >"$work/validate.out" 2>"$work/validate.err"
status=$?
[ "$status" -eq 0 ] || fail "validate exited $status: $(cat "$work/validate.err")"
grep -Eq '^cells: +4$' "$work/validate.out" ||
  fail "validate did not report 4 cells: $(cat "$work/validate.out")"
listed=$(grep -Ec '^  cell [0-9]+ ' "$work/validate.out")
[ "$listed" -eq "$cells" ] || fail "validate listed $listed cells, expected $cells"
[ -e "$work/results" ] && fail "validate wrote results"

finish
