#!/usr/bin/env bash
# The bad-input corpus (the configs tests/cli/bad_inputs.sh writes, and tests/data/bad_npy/)
# through calbench_parse_corpus: every file parses or is refused with a message, and the
# parser writes nothing to stderr. Built in the asan preset this is the sanitizer run over the
# corpus (docs/testing.md); a sanitizer report exits non-zero and prints to stderr.
#
# Usage: parse_corpus.sh CALBENCH_BINARY PARSE_CORPUS_BINARY SOURCE_DIR
set -u
bin=${1:?usage: parse_corpus.sh CALBENCH_BINARY PARSE_CORPUS_BINARY SOURCE_DIR}
parse=${2:?usage: parse_corpus.sh CALBENCH_BINARY PARSE_CORPUS_BINARY SOURCE_DIR}
src=${3:?usage: parse_corpus.sh CALBENCH_BINARY PARSE_CORPUS_BINARY SOURCE_DIR}

work=$(mktemp -d "${TMPDIR:-/tmp}/calbench_parse_corpus.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# The corpus: tests/cli/bad_inputs.sh keeps its configs in a directory under TMPDIR.
KEEP_WORK=1 TMPDIR="$work" "$src/tests/cli/bad_inputs.sh" "$bin" "$src" >/dev/null ||
  { echo "parse_corpus: FAIL: tests/cli/bad_inputs.sh failed" >&2; exit 1; }
files=("$work"/calbench_cli_bad_inputs.*/*.json "$src"/tests/data/bad_npy/*.npy)
"$parse" "${files[@]}" >"$work/out.txt" 2>"$work/err.txt"
status=$?
if [ "$status" -ne 0 ] || [ -s "$work/err.txt" ]; then
  echo "parse_corpus: FAIL: exit status $status; stderr:" >&2
  head -50 "$work/err.txt" >&2
  exit 1
fi
lines=$(wc -l <"$work/out.txt")
[ "$lines" -eq "${#files[@]}" ] ||
  { echo "parse_corpus: FAIL: $lines lines for ${#files[@]} files" >&2; exit 1; }
# Each crafted NPY file is refused with a message (none reaches "parsed").
if grep -q '^parsed: .*\.npy$' "$work/out.txt"; then
  echo "parse_corpus: FAIL: a bad NPY file was accepted: $(grep '^parsed: .*\.npy$' "$work/out.txt")" >&2
  exit 1
fi
echo "parse_corpus: ok (${#files[@]} files)"
