# Sourced first by the tests/cli/*.sh scripts, which set before it
#     script=cli_eval                      # its name in its messages
#     usage="CALBENCH_BINARY SOURCE_DIR"   # its arguments, all required
#     fail_fast=1                          # optional: the first failed check ends the script
#     . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# It checks the arguments (a missing one prints the usage line and exits 1) and sets $bin and
# $src from CALBENCH_BINARY and SOURCE_DIR (a script reads its other arguments itself); makes
# the work directory $work under TMPDIR, removed on exit by remove_work unless KEEP_WORK is set
# (a script with more to clean up traps its own function, which calls remove_work), and
# changes into it, so that nothing a run writes can land in the source tree. Then:
#   fail MESSAGE  "SCRIPT: FAIL: MESSAGE" on stderr, counted in $failures (with fail_fast: exit 1;
#                 a function fail_context, when the script defines one, adds its output)
#   finish [TEXT] the last line: "SCRIPT: ok (TEXT)" and exit 0, or the number of failed checks
#                 on stderr and exit 1
#   skip REASON   the checks left are not run: exit 77 (ctest's skipped) if none failed so far
#   table FILE    a CSV result file without "# key: value" meta lines (which result files
#                 written before the tidy CSVs of docs/config.md started with)
# shellcheck disable=SC2034,SC2154  # script and usage come from the script; bin, src for it
set -u

cli_index=0
for cli_word in $usage; do
  cli_index=$((cli_index + 1))
  if [ -z "${!cli_index:-}" ]; then
    echo "usage: tests/cli/${script#cli_}.sh $usage  (KEEP_WORK=1 keeps the temp directory)" >&2
    exit 1
  fi
  case $cli_word in
    CALBENCH_BINARY) bin=${!cli_index} ;;
    SOURCE_DIR)
      src=${!cli_index}
      [ -d "$src" ] || { echo "$script: FAIL: no source directory $src" >&2; exit 1; }
      ;;
  esac
done
unset cli_index cli_word

work=$(mktemp -d "${TMPDIR:-/tmp}/calbench_$script.XXXXXX") || exit 1
remove_work() {
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
}
trap remove_work EXIT
cd "$work" || exit 1

failures=0
fail() {
  echo "$script: FAIL: $*" >&2
  declare -F fail_context >/dev/null && fail_context >&2
  failures=$((failures + 1))
  [ -z "${fail_fast:-}" ] || exit 1
}

# shellcheck disable=SC2120  # TEXT is optional
finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$script: $failures failed check(s)${1:+ ($1)}" >&2
    exit 1
  fi
  echo "$script: ok${1:+ ($1)}"
  exit 0
}

skip() {
  echo "$script: skipped: $*" >&2
  [ "$failures" -eq 0 ] && exit 77
  finish
}

table() { grep -v '^#' "$1"; }
