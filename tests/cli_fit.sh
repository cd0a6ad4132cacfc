#!/usr/bin/env bash
# calbench fit from the command line: a fit on a small CSV, the config it writes runs, JSON
# output parses, and bad input exits 2 with nothing written (docs/fit.md).
script=cli_fit usage="CALBENCH_BINARY"
# shellcheck source=tests/cli_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/cli_common.sh"

# 400 rows, K = 3, from a fixed linear congruential stream: overconfident-ish by construction
# (the label follows the largest p only 70 % of the time).
awk 'BEGIN { s = 12345; for (i = 0; i < 400; i++) {
  s = (s * 1103515245 + 12345) % 2147483648; a = 1 + s % 97
  s = (s * 1103515245 + 12345) % 2147483648; b = 1 + s % 89
  s = (s * 1103515245 + 12345) % 2147483648; c = 1 + s % 83
  t = a * a + b * b + c * c; pa = a * a / t; pb = b * b / t; pc = 1 - pa - pb
  s = (s * 1103515245 + 12345) % 2147483648; u = (s % 1000) / 1000
  top = (pa >= pb && pa >= pc) ? 0 : (pb >= pc ? 1 : 2)
  y = (u < 0.7) ? top : (top + 1 + (s % 2)) % 3
  printf "%d,%.17g,%.17g,%.17g\n", y, pa, pb, pc } }' >"$work/model.csv"

"$bin" fit "$work/model.csv" --out "$work/fake.json" >"$work/fit.out" 2>"$work/fit.err" ||
  fail "fit exited $?: $(cat "$work/fit.err")"
grep -q "<- chosen" "$work/fit.out" || fail "no chosen map in: $(cat "$work/fit.out")"
grep -q "total variation distance" "$work/fit.out" || fail "no histogram comparison"
"$bin" validate "$work/fake.json" >/dev/null || fail "the written config does not validate"
"$bin" fit "$work/model.csv" --json --map temperature >"$work/fit.json" || fail "fit --json"
python3 - "$work/fit.json" <<'PY' || fail "fit --json is not the documented JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["n"] == 400 and d["classes"] == 3
assert d["generator"]["miscalibration"]["map"] == "temperature"
assert [m["map"] for m in d["maps"]] == ["temperature"]
assert 0 <= d["fake"]["accuracy"]["value"] <= 1 and d["fake"]["accuracy"]["method"]
assert abs(sum(d["model"]["confidence_histogram"]) - 1) < 1e-12
PY

# Bad input: exit 2, a message naming the file or option, no config written.
head -1 "$work/model.csv" >"$work/one.csv"
"$bin" fit "$work/one.csv" --out "$work/one.json" >/dev/null 2>"$work/one.err"
[ $? -eq 2 ] && grep -q "one.csv: fit needs at least 2 rows" "$work/one.err" ||
  fail "one row: $(cat "$work/one.err")"
[ -e "$work/one.json" ] && fail "one row: a config was written"
"$bin" fit "$work/missing.csv" >/dev/null 2>"$work/missing.err"
[ $? -eq 2 ] && grep -q "missing.csv" "$work/missing.err" || fail "missing file: $(cat "$work/missing.err")"
"$bin" fit "$work/model.csv" --map bogus >/dev/null 2>"$work/map.err"
[ $? -eq 2 ] && grep -q "\-\-map" "$work/map.err" || fail "--map bogus: $(cat "$work/map.err")"

finish
