#!/usr/bin/env bash
# A shipped estimator_bias config, run in full, against its committed baseline
# (results/baselines/NAME.json, docs/check.md): `calbench check` must find nothing moved.
set -u
bin=$1
source_dir=$2
name=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" run "$source_dir/configs/$name.json" --out "$work/out" --quiet || exit 1
"$bin" check "$work/out" --baseline "$source_dir/results/baselines/$name.json"
