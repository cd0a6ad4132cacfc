#!/usr/bin/env bash
# A shipped estimator_bias config, run in full, against its committed baseline
# (results/baselines/NAME.json, docs/check.md): `calbench check` must find nothing moved.
#
# Usage: tests/cli/baseline.sh CALBENCH_BINARY SOURCE_DIR NAME  (KEEP_WORK=1 keeps the temp directory)
script=cli_baseline usage="CALBENCH_BINARY SOURCE_DIR NAME" fail_fast=1
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$3

"$bin" run "$src/configs/$name.json" --out "$work/out" --quiet || fail "$name: the run exited $?"
"$bin" check "$work/out" --baseline "$src/results/baselines/$name.json" ||
  fail "$name: calbench check exited $? against results/baselines/$name.json"
finish "$name"
