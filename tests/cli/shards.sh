#!/usr/bin/env bash
# Shards (docs/durability.md): `calbench run CONFIG --shard I/N` for I = 1..3, on different
# thread counts, then `calbench merge` gives every result file but run.json byte for byte as
# one run does, for estimator_bias, recalibration and decision (three journal stages); a shard
# killed with kill -9 and resumed with --shard I/N --resume merges to the same bytes; merge
# refuses a missing shard, a shard given twice and shards of different configs (exit 2).
#
# Usage: tests/cli/shards.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_shards usage="CALBENCH_BINARY SOURCE_DIR" fail_fast=1
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

. "$src/tests/cli/result_sets.sh"

for name in tiny tiny_recalibration durable_decision; do
  config="$src/tests/data/$name.json"
  "$bin" run "$config" --out "$name/single" --threads 2 --quiet || fail "$name: single run failed"
  threads=1
  for i in 1 2 3; do
    "$bin" run "$config" --shard "$i/3" --out "$name/shard$i" --threads $threads --quiet ||
      fail "$name: shard $i/3 failed"
    [ -f "$name/shard$i/journal.bin" ] || fail "$name: shard $i has no journal"
    threads=$((3 - threads))
  done
  # Shards in any order.
  "$bin" merge "$name/shard3" "$name/shard1" "$name/shard2" --out "$name/merged" --threads 2 \
    --quiet 2>"$name.merge.err" || fail "$name: merge failed: $(cat "$name.merge.err")"
  same_set "$name/single" "$name/merged" "$name: 3 shards merged"
done

# A config whose empirical generator names its rows file relative to the config (every arena
# config does): merge reads the shards' copy of the config as the file they ran (shard.json's
# config_file), so the rows resolve beside the config, not beside the copy (they did not).
fake_config fake fake
"$bin" run fake/fake.json --out fake_single --threads 2 --quiet || fail "fake: single run failed"
"$bin" run fake/fake.json --shard 1/2 --out fake_shard1 --threads 1 --quiet || fail "fake: shard 1"
"$bin" run fake/fake.json --shard 2/2 --out fake_shard2 --threads 2 --quiet || fail "fake: shard 2"
"$bin" merge fake_shard2 fake_shard1 --out fake_merged --quiet 2>fake.merge.err ||
  fail "fake: merge failed: $(cat fake.merge.err)"
same_set fake_single fake_merged "an empirical fake's relative rows: 2 shards merged"

# The default output of a shard is OUT.shard-I-of-N; a killed shard resumes as a shard.
config="$src/tests/data/durable.json"
"$bin" run "$config" --out durable/single --threads 2 --quiet || fail "durable: single run failed"
"$bin" run "$config" --shard 1/2 --quiet || fail "shard 1/2 into the default directory"
[ -f results/durable.shard-1-of-2/shard.json ] || fail "no results/durable.shard-1-of-2"
"$bin" run "$config" --shard 2/2 --quiet --threads 2 2>k.err &
pid=$!
journal=results/.durable.shard-2-of-2.partial/journal.bin
for _ in $(seq 1 3000); do
  [ "$(stat -c %s $journal 2>/dev/null || echo 0)" -ge 200 ] && break
  kill -0 $pid 2>/dev/null || fail "shard 2/2 ended before it could be killed"
  sleep 0.01
done
kill -9 $pid
wait $pid 2>/dev/null
"$bin" run "$config" --shard 2/2 --quiet --threads 1 --resume || fail "resuming shard 2/2"
"$bin" merge results/durable.shard-1-of-2 results/durable.shard-2-of-2 --quiet ||
  fail "merging the default shard directories"
same_set durable/single results/durable "2 shards, one killed and resumed"

# What merge refuses.
"$bin" merge tiny/shard1 tiny/shard2 --out bad1 --quiet 2>bad1.err
[ $? -eq 2 ] || fail "merge of 2 of 3 shards did not exit 2"
"$bin" merge tiny/shard1 tiny/shard1 tiny/shard2 --out bad2 --quiet 2>bad2.err
[ $? -eq 2 ] || fail "merge of a shard given twice did not exit 2"
grep -q "given twice" bad2.err || fail "no message for a shard given twice: $(cat bad2.err)"
"$bin" merge tiny/shard1 durable_decision/shard2 tiny/shard3 --out bad3 --quiet 2>bad3.err
[ $? -eq 2 ] || fail "merge of shards of different configs did not exit 2"
grep -q "different runs" bad3.err || fail "no message for mixed shards: $(cat bad3.err)"
[ -e bad1 ] || [ -e bad2 ] || [ -e bad3 ] && fail "a refused merge wrote results"
"$bin" run "$config" --shard 4/3 --quiet 2>bad4.err
[ $? -eq 2 ] || fail "--shard 4/3 did not exit 2"

finish
