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

# fake_config DIR NAME: DIR/NAME.json, a small recalibration config (tests/data/
# tiny_recalibration.json, three methods, 5,000 truth rows) on the shipped fake
# configs/arena/fakes/cancer_lr_k2, whose rows file is named relative to the config
# (DIR/fakes/...), as in every arena config. Needs $src.
fake_config() {
  local dir=$1 name=$2
  mkdir -p "$dir/fakes"
  cp "$src/configs/arena/fakes/cancer_lr_k2.rows.npy" "$dir/fakes/"
  "${CALBENCH_PYTHON:-/usr/bin/python3}" - "$src/configs/arena/fakes/cancer_lr_k2.json" \
    "$src/tests/data/tiny_recalibration.json" "$dir/$name.json" "$name" <<'PY'
import json, sys
generator = json.load(open(sys.argv[1]))["generator"]
generator["rows"] = "fakes/" + generator["rows"]
config = json.load(open(sys.argv[2]))
config.update({"name": sys.argv[4], "generator": generator, "truth_samples": 5000,
               "truth": {"samples": 5000}})
config["methods"] = config["methods"][:3]
json.dump(config, open(sys.argv[3], "w"), indent=1)
PY
}
