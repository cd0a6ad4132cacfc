#!/usr/bin/env bash
# docs/gates.md's examples are the shipped gate configs' output, line for line: each
# configs/gates/NAME.json is run as a reader would, and every line it prints must be a line of
# the page (ctest docs.gates, label slow: about a minute, most of it the members' truths).
script=docs_gates usage="CALBENCH_BINARY SOURCE_DIR"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

page="$src/docs/gates.md"
for name in ece_008_n100 ece_and_kuiper_n100 ece_design; do
  "$bin" gate "$src/configs/gates/$name.json" --quiet >"$work/$name.out" 2>"$work/$name.err" ||
    fail "$name exited $?: $(cat "$work/$name.err")"
  [ -s "$work/$name.out" ] || fail "$name printed nothing"
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    grep -qxF -- "$line" "$page" || fail "$name: docs/gates.md lacks the line: $line"
  done <"$work/$name.out"
done
finish "the examples of docs/gates.md"
