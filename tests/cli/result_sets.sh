# Sourced by the cli_*.sh tests that compare result sets (needs their `fail`).
# same_set EXPECTED ACTUAL WHAT: the two result sets hold the same files, byte for byte, but for
# run.json (its facts are volatile: times, host, threads).
same_set() {
  local expected=$1 actual=$2 what=$3
  [ -d "$actual" ] || fail "$what: no result directory $actual"
  [ "$(ls "$expected")" = "$(ls "$actual")" ] ||
    fail "$what: files differ: $(ls "$expected" | tr '\n' ' ') vs $(ls "$actual" | tr '\n' ' ')"
  for file in "$expected"/*; do
    name=$(basename "$file")
    [ "$name" = run.json ] && continue
    cmp -s "$file" "$actual/$name" || fail "$what: $name differs from $expected"
  done
}
