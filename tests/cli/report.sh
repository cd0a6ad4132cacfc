#!/usr/bin/env bash
# The HTML report (docs/python.md, "The HTML report"): `calbench run` writes report/index.html
# and prints its path; the page is byte-identical for 1 and 2 threads and when re-rendered;
# --no-report and CALBENCH_NO_REPORT skip it; without python3 the run warns in one line and
# succeeds; `calbench eval --plot` writes the model's diagrams. Then headless Chromium renders
# both pages: the screenshots must not be blank and the pages must log nothing to the console.
# Without `chromium` (Debian's package; scripts/setup.sh tests installs it) the checks before it still
# run and the test exits 77, which ctest reports as skipped.
#
# Usage: tests/cli/report.sh CALBENCH_BINARY SOURCE_DIR PYTHON3  (KEEP_WORK=1 keeps the temp directory)
script=cli_report usage="CALBENCH_BINARY SOURCE_DIR PYTHON3"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
python=$3
config="$src/tests/data/tiny_report.json"
unset CALBENCH_NO_REPORT CALBENCH_PYTHON

# 1. The report of a run, deterministic. (The result files are byte-identical for any thread
# count, cli.run_tiny and the goldens; the page is a function of them, so rendering it again
# checks its determinism.)
"$bin" run "$config" --threads 2 --out "$work/t1" >"$work/t1.out" 2>"$work/t1.err" ||
  fail "run: $(cat "$work/t1.err")"
# Progress lines (every 5 s when stderr is not a terminal) appear when a loaded machine makes
# the run slow; anything else is a failure.
grep -v -E '^tiny_report: [0-9]+/[0-9]+ replicates \(' "$work/t1.err" >"$work/t1.other"
[ -s "$work/t1.other" ] && fail "the run printed to stderr: $(cat "$work/t1.err")"
grep -qx "report: $work/t1/report/index.html" "$work/t1.out" ||
  fail "the run did not print where the report is: $(tail -2 "$work/t1.out")"
page="$work/t1/report/index.html"
[ -s "$page" ] || fail "no report/index.html"
cp "$page" "$work/first.html"
PYTHONPATH="$src/python" MPLBACKEND=Agg "$python" -B -m calbench.report "$work/t1" >/dev/null ||
  fail "python3 -m calbench.report failed"
cmp -s "$page" "$work/first.html" || fail "index.html differs when rendered again"
grep -q "<svg" "$page" || fail "index.html has no figure"
ls "$work/t1/report" | grep -v '^index.html$' | grep -q . && fail "stray files in report/"

# 2. Skipping the report.
"$bin" run "$config" --out "$work/none" --quiet --no-report || fail "run --no-report"
[ -e "$work/none/report" ] && fail "--no-report wrote a report"
CALBENCH_NO_REPORT=1 "$bin" run "$config" --out "$work/none_env" --quiet || fail "run with CALBENCH_NO_REPORT"
[ -e "$work/none_env/report" ] && fail "CALBENCH_NO_REPORT=1 wrote a report"

# 3. No python3: one warning line, status 0, the results complete.
CALBENCH_PYTHON="$work/no-such-python3" "$bin" run "$config" --out "$work/nopy" --quiet \
  2>"$work/nopy.err"
status=$?
[ "$status" -eq 0 ] || fail "without python3 the run exited $status"
[ "$(wc -l <"$work/nopy.err")" -eq 1 ] && grep -q "^calbench: warning: no HTML report: " "$work/nopy.err" ||
  fail "without python3, expected one warning line, got: $(cat "$work/nopy.err")"
[ -f "$work/nopy/summary.json" ] && [ -f "$work/nopy/reliability.csv" ] || fail "results missing without python3"

# 4. eval --plot.
"$bin" eval "$src/tests/reference/datasets/dir_k3_n2000.csv" --resamples 2 \
  --estimators '[{"name": "ece"}]' --plot "$work/eval" >"$work/eval.out" 2>"$work/eval.err" ||
  fail "eval --plot: $(cat "$work/eval.err")"
grep -qx "report: $work/eval/index.html" "$work/eval.out" || fail "eval --plot did not print the page"
for f in index.html reliability.csv reliability_equal_width.svg reliability_equal_mass.svg \
  reliability_classes.svg; do
  [ -s "$work/eval/$f" ] || fail "eval --plot did not write $f"
done
# The reference ECE of dir_k3_n2000 (tests/cli/eval.sh) in the equal-width diagram's title.
grep -q "ECE 0.0848" "$work/eval/reliability_equal_width.svg" || fail "eval diagram without its ECE"

# 5. Headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  skip "chromium is not installed; the browser checks are skipped"
fi
shoot() {  # shoot PAGE PNG LOG
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$work/profile" --enable-logging=stderr --v=0 --window-size=1280,2200 \
    --screenshot="$2" "file://$1" >"$3" 2>&1
}
for name in run eval; do
  if [ "$name" = run ]; then target="$page"; else target="$work/eval/index.html"; fi
  shoot "$target" "$work/$name.png" "$work/$name.chromium.log" ||
    fail "chromium failed on the $name page: $(tail -3 "$work/$name.chromium.log")"
  # Console messages (errors, uncaught exceptions) are logged as INFO:CONSOLE lines.
  grep -q ":CONSOLE" "$work/$name.chromium.log" &&
    fail "the $name page logged to the console: $(grep ":CONSOLE" "$work/$name.chromium.log")"
done
# Not blank: enough non-white pixels, many colours, and Okabe-Ito blue (#0072B2) or vermillion
# (#D55E00) drawn.
MPLBACKEND=Agg "$python" -B - "$work/run.png" "$work/eval.png" <<'PY' || fail "a screenshot looks blank"
import sys
import matplotlib.image
import numpy as np
ok = True
for path in sys.argv[1:]:
    img = matplotlib.image.imread(path)[..., :3]
    h, w = img.shape[:2]
    ink = np.mean(np.any(img < 0.95, axis=2))
    colours = len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    accent = sum(int(np.sum(np.all(np.abs(img - np.array(rgb) / 255) < 0.08, axis=2)))
                 for rgb in ((0x00, 0x72, 0xB2), (0xD5, 0x5E, 0x00)))
    print(f"{path}: {w}x{h}, ink {ink:.3f}, {colours} colours, {accent} accent pixels")
    ok = ok and h >= 500 and ink > 0.03 and colours > 50 and accent > 200
sys.exit(0 if ok else 1)
PY

finish
