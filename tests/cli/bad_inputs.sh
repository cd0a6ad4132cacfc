#!/usr/bin/env bash
# Bad inputs on the command line (DESIGN.md §3, §5): a config error exits with status 2, prints
# one message per problem naming the file, the JSON pointer and the rule, and writes nothing.
# Usage errors exit 2 as well; `list` and `--version` work.
#
# Usage: tests/cli/bad_inputs.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_bad_inputs usage="CALBENCH_BINARY SOURCE_DIR"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cases=0

# A small valid config with each section replaceable:
#   config REPLICATES SAMPLE_SIZE GENERATOR ESTIMATORS [EXTRA_TOP_LEVEL_MEMBERS]
gen_ok='{"family": "dirichlet", "classes": 3, "alpha": 0.5,
         "miscalibration": {"map": "temperature", "temperature": 0.8}}'
est_ok='[{"name": "ece"}, {"name": "brier"}]'
config() {
  printf '{\n  "scenario": "estimator_bias",\n  "replicates": %s,\n  "sample_size": %s,\n' "$1" "$2"
  printf '  "generator": %s,\n  "estimators": %s%s\n}\n' "$3" "$4" "${5:+,
  $5}"
}
gen_with_map() {
  printf '{"family": "dirichlet", "classes": 3, "alpha": 0.5, "miscalibration": %s}' "$1"
}

# expect_bad NAME CONTENT EXPECTED...
# Writes CONTENT to NAME.json and runs it. EXPECTED is one "POINTER|PHRASE" per problem: a line
# of stderr must read "error: FILE: POINTER: ..." and contain PHRASE, and there must be exactly
# as many error lines as EXPECTED entries. POINTER "-" means the message has no pointer
# ("error: FILE: PHRASE...").
expect_bad() {
  local name=$1 content=$2
  shift 2
  local file="$work/$name.json"
  printf '%s' "$content" >"$file"
  expect_rejected "$name" "$file" "$@"
}

# expect_rejected NAME FILE EXPECTED...: as expect_bad, for a file that is already in place
# (or missing).
expect_rejected() {
  local name=$1 file=$2
  shift 2
  cases=$((cases + 1))
  local out="$work/out_$name"
  "$bin" run "$file" --out "$out" --quiet >"$work/$name.stdout" 2>"$work/$name.stderr"
  local status=$?
  local stderr
  stderr=$(cat "$work/$name.stderr")
  if [ "$status" -ne 2 ]; then
    fail "$name: exit status $status, expected 2; stderr:
$stderr"
    return
  fi
  [ -e "$out" ] && fail "$name: the output directory $out was created"
  [ -s "$work/$name.stdout" ] && fail "$name: printed to stdout: $(cat "$work/$name.stdout")"
  # `validate` refuses what `run` refuses before computing, with the same lines (issue #28).
  "$bin" validate "$file" >/dev/null 2>"$work/$name.validate.stderr"
  local validate_status=$?
  [ "$validate_status" -eq 2 ] || fail "$name: validate exited $validate_status, expected 2"
  # (The available memory a pre-flight message quotes changes between the two runs.)
  local mask='s/has [0-9.e+-]* GB available/has M GB available/'
  [ "$(grep '^error: ' "$work/$name.stderr" | sed "$mask")" = \
    "$(grep '^error: ' "$work/$name.validate.stderr" | sed "$mask")" ] ||
    fail "$name: validate's errors differ from run's: $(cat "$work/$name.validate.stderr")"
  local lines
  lines=$(grep -c '^error: ' "$work/$name.stderr")
  [ "$lines" -eq "$#" ] || fail "$name: $lines error lines, expected $#; stderr:
$stderr"
  local expected pointer phrase head found line
  for expected in "$@"; do
    pointer=${expected%%|*}
    phrase=${expected#*|}
    if [ "$pointer" = "-" ]; then head="error: $file: "; else head="error: $file: $pointer: "; fi
    found=0
    while IFS= read -r line; do
      case "$line" in
        "$head"*) [[ "$line" == *"$phrase"* ]] && found=1 ;;
      esac
    done <"$work/$name.stderr"
    [ "$found" -eq 1 ] || fail "$name: no line starting \"$head\" containing \"$phrase\"; stderr:
$stderr"
  done
}

# ---- files ----------------------------------------------------------------------------------
expect_bad not_json '{"scenario": "estimator_bias", oops}' \
  '-|not valid JSON: parse error at line 1, column 32: syntax error'
expect_rejected missing_file "$work/no_such_config.json" \
  '-|cannot open the file (No such file or directory)'
# Limits that keep parsing linear and the stack bounded (was a segfault at ~87,000 levels and
# 41 s for 100,000 keys).
expect_bad deep_nesting "$(printf '{"a":%.0s' $(seq 90000))1$(printf '}%.0s' $(seq 90000))" \
  '-|nested deeper than 100 levels'
expect_bad many_keys "{$(seq -f '"k%.0f": 0,' 0 20000 | tr -d '\n')\"z\": 0}" \
  '-|an object with more than 10000 keys'

# ---- keys and types -------------------------------------------------------------------------
expect_bad unknown_top_key "$(config 5 50 "$gen_ok" "$est_ok" '"frobnicate": 1')" \
  '/frobnicate|unknown key; valid keys: decision, estimators, fit_size, generator, intervals, leaderboard, methods, name, output, provenance, recalibrator, reliability, replicates'
expect_bad unknown_generator_key \
  "$(config 5 50 '{"family": "dirichlet", "classes": 3, "colour": "red"}' "$est_ok")" \
  '/generator/colour|unknown key; valid keys: alpha, classes, family, miscalibration'
expect_bad replicates_string "$(config '"many"' 50 "$gen_ok" "$est_ok")" \
  '/replicates|expected an integer >= 1, found a string ("many")'

# ---- ranges ---------------------------------------------------------------------------------
expect_bad classes_1 "$(config 5 50 '{"family": "dirichlet", "classes": 1}' "$est_ok")" \
  '/generator/classes|expected an integer >= 2, found 1'
expect_bad alpha_negative \
  "$(config 5 50 '{"family": "dirichlet", "classes": 3, "alpha": -0.5}' "$est_ok")" \
  '/generator/alpha|alpha = -0.5: must be > 0'
expect_bad alpha_wrong_length \
  "$(config 5 50 '{"family": "dirichlet", "classes": 3, "alpha": [1, 2]}' "$est_ok")" \
  '/generator/alpha|expected an array of 3 numbers > 0 (one per class), found an array of 2'
expect_bad temperature_0 \
  "$(config 5 50 "$(gen_with_map '{"map": "temperature", "temperature": 0}')" "$est_ok")" \
  '/generator/miscalibration/temperature|temperature = 0: must be >= 0.0001 and <= 1e+06'
expect_bad temperature_nan_string \
  "$(config 5 50 "$(gen_with_map '{"map": "temperature", "temperature": "NaN"}')" "$est_ok")" \
  '/generator/miscalibration/temperature|expected a finite number >= 0.0001 and <= 1e+06, found a string ("NaN")'
expect_bad exponents_wrong_length \
  "$(config 5 50 "$(gen_with_map '{"map": "power", "exponents": [1, 2]}')" "$est_ok")" \
  '/generator/miscalibration/exponents|expected an array of 3 numbers > 0 (one per class), found an array of 2'
expect_bad gamma_negative \
  "$(config 5 50 "$(gen_with_map '{"map": "top_label", "gamma": -1}')" "$est_ok")" \
  '/generator/miscalibration/gamma|gamma = -1: must be >= 0.0001 and <= 100'
expect_bad bins_0 "$(config 5 50 "$gen_ok" '[{"name": "ece", "bins": 0}]')" \
  '/estimators/0/bins|expected an integer >= 1, found 0'
expect_bad replicates_0 "$(config 0 50 "$gen_ok" "$est_ok")" \
  '/replicates|expected an integer >= 1, found 0'
expect_bad sample_size_0 "$(config 5 0 "$gen_ok" "$est_ok")" \
  '/sample_size|expected an integer >= 1, found 0'

# An estimator that cannot take the number of classes, at its key (run stopped at the first
# estimate with exit 1 and no pointer; validate accepted it).
expect_bad binary_scope_k3 "$(config 5 50 "$gen_ok" '[{"name": "ece", "scope": "binary"}]')" \
  '/estimators/0|scope binary needs K = 2 classes, found K = 3'
expect_bad binary_scope_swept \
  "$(config 5 50 '{"family": "dirichlet", "classes": 2, "alpha": 0.5}' '[{"name": "ece_debiased", "scope": "binary"}]' '"sweep": {"generator.classes": [2, 4]}')" \
  '/estimators/0|scope binary needs K = 2 classes, found K = 4 (in sweep cell 1: generator.classes=4)'

# ---- sweep ----------------------------------------------------------------------------------
expect_bad sweep_bad_path \
  "$(config 5 50 "$gen_ok" "$est_ok" '"sweep": {"generator.temperature": [0.5, 2]}')" \
  '/sweep/generator.temperature|sweep path "generator.temperature" does not exist in the config'
expect_bad sweep_empty_list "$(config 5 50 "$gen_ok" "$est_ok" '"sweep": {"sample_size": []}')" \
  '/sweep/sample_size|expected a non-empty array of values, found an empty array'

# ---- names ----------------------------------------------------------------------------------
expect_bad unknown_estimator "$(config 5 50 "$gen_ok" '[{"name": "ece"}, {"name": "foo"}]')" \
  '/estimators/1/name|unknown estimator "foo"; valid: accuracy, ace, brier, calib_err, classwise_ece, '
expect_bad unknown_map "$(config 5 50 "$(gen_with_map '{"map": "warp"}')" "$est_ok")" \
  '/generator/miscalibration/map|unknown miscalibration map "warp"; valid: affine_logit, identity'
expect_bad unknown_family "$(config 5 50 '{"family": "beta", "classes": 3}' "$est_ok")" \
  '/generator/family|unknown family "beta"; valid: beta_binary, class_conditional, dirichlet, dirichlet_mixture, empirical, label_noise'

# ---- generator families and targets (issue #5) ------------------------------------------------
target_gen() {  # target_gen ACCURACY ECE [DIRECTION] [MAP]
  printf '{"family": "dirichlet", "classes": 5, "target": {"accuracy": %s, "ece_top_l1": %s%s},
           "miscalibration": {"map": "%s"}}' "$1" "$2" "${3:+, \"direction\": \"$3\"}" "${4:-temperature}"
}
expect_bad target_above_bound "$(config 5 50 "$(target_gen 0.8 0.25)" "$est_ok")" \
  '/generator/target/ece_top_l1|unreachable at accuracy 0.8: an always-overconfident map gives ECE < 1 - accuracy'
expect_bad target_under_bound "$(config 5 50 "$(target_gen 0.5 0.35 underconfident)" "$est_ok")" \
  '/generator/target/ece_top_l1|an underconfident map gives ECE < accuracy - 1/K'
expect_bad target_chance "$(config 5 50 "$(target_gen 0.15 0.05)" "$est_ok")" \
  '/generator/target/accuracy|accuracy = 0.15: must be > 1/K = 0.2'
expect_bad target_top_label_under "$(config 5 50 "$(target_gen 0.8 0.05 underconfident top_label)" "$est_ok")" \
  '/generator/target/direction|underconfident top_label targets need gamma > 1'
expect_bad target_with_alpha \
  "$(config 5 50 '{"family": "dirichlet", "classes": 3, "alpha": 0.5, "target": {"accuracy": 0.8, "ece_top_l1": 0.1}, "miscalibration": {"map": "temperature", "temperature": 0.5}}' "$est_ok")" \
  '/generator/alpha|alpha is solved from "target"' \
  '/generator/miscalibration/temperature|the map'"'"'s parameter is solved from "target"'
expect_bad target_power_map \
  "$(config 5 50 '{"family": "dirichlet", "classes": 3, "target": {"accuracy": 0.8, "ece_top_l1": 0.1, "direction": "sideways"}, "miscalibration": {"map": "power"}}' "$est_ok")" \
  '/generator/target/direction|unknown direction "sideways"; valid: overconfident, underconfident' \
  '/generator/miscalibration/map|unknown target map "power"; valid: temperature, top_label'
sweep_target='"sweep": {"generator.target.ece_top_l1": [0.05, 0.3]}'
expect_bad target_swept "$(config 5 50 "$(target_gen 0.8 0.1)" "$est_ok" "$sweep_target")" \
  '/sweep/generator.target.ece_top_l1/1|ece_top_l1 = 0.3 is unreachable at accuracy 0.8'
expect_bad label_noise_bad \
  "$(config 5 50 '{"family": "label_noise", "classes": 3, "weight": 1.5, "beta": [0.5, 0.6, 0]}' "$est_ok")" \
  '/generator/weight|weight = 1.5: must be >= 0 and <= 1' \
  '/generator/beta|beta sums to 1.1: must sum to 1'
expect_bad label_noise_index \
  "$(config 5 50 '{"family": "label_noise", "classes": 3, "weight": 0.2, "beta": 3}' "$est_ok")" \
  '/generator/beta|beta = 3: a class index must be < classes = 3'
expect_bad class_conditional_both \
  "$(config 5 50 '{"family": "class_conditional", "classes": 2, "concentration": 1, "alpha": [[1, 2], [2, 1]]}' "$est_ok")" \
  '/generator|give either "alpha" (a K x K matrix) or "concentration"'
expect_bad class_conditional_matrix \
  "$(config 5 50 '{"family": "class_conditional", "classes": 2, "prior": [0.5, 0.5, 0], "alpha": [[1, 2], [2, -1]]}' "$est_ok")" \
  '/generator/prior|expected an array of 2 numbers (one per class), found an array of 3' \
  '/generator/alpha/1/1|alpha[1][1] = -1: must be > 0'
expect_bad beta_binary_bad \
  "$(config 5 50 '{"family": "beta_binary", "classes": 3, "a": 0, "b": 1, "calibration": {"curve": "polynomial"}}' "$est_ok")" \
  '/generator/classes|beta_binary has K = 2' \
  '/generator/a|a = 0: must be >= 0.01 and <= 1000' \
  '/generator/calibration/d|required key is missing'
expect_bad beta_binary_point_mass \
  "$(config 5 50 '{"family": "beta_binary", "a": 2, "b": 1, "point_mass": 0.1, "calibration": {"curve": "logistic", "a": 0, "b": 2}}' "$est_ok")" \
  '/generator|point_mass = 0.1 with the logistic curve'
expect_bad dirichlet_mixture_bad \
  "$(config 5 50 '{"family": "dirichlet_mixture", "classes": 3, "components": [{"weight": 0.5, "alpha": 1}, {"weight": 0.4, "alpha": 2}], "miscalibration": {"map": "top_label", "gamma": 0.5}}' "$est_ok")" \
  '/generator/components|the weights sum to 0.9: must sum to 1' \
  '/generator/miscalibration|dirichlet_mixture accepts identity, temperature or power'
expect_bad dirichlet_mixture_alpha \
  "$(config 5 50 '{"family": "dirichlet_mixture", "classes": 3, "components": [{"weight": 1, "alpha": [1, 2], "beta": 1}]}' "$est_ok")" \
  '/generator/components/0/alpha|expected an array of 3 numbers > 0' \
  '/generator/components/0/beta|unknown key; valid keys: alpha, weight'

# ---- several problems are reported together -------------------------------------------------
expect_bad two_problems \
  "$(config 0 50 "$(gen_with_map '{"map": "temperature", "temperature": -1}')" "$est_ok")" \
  '/replicates|expected an integer >= 1, found 0' \
  '/generator/miscalibration/temperature|temperature = -1: must be >= 0.0001 and <= 1e+06'

# `validate` rejects what `run` rejects, with the same status.
cases=$((cases + 1))
"$bin" validate "$work/replicates_0.json" >/dev/null 2>"$work/validate.err"
status=$?
[ "$status" -eq 2 ] || fail "validate of a bad config: exit status $status, expected 2"
grep -q "^error: $work/replicates_0.json: /replicates: " "$work/validate.err" ||
  fail "validate of a bad config: $(cat "$work/validate.err")"

# ---- bounds, pre-flight and numerical guards (issue #14) --------------------------------------
# Values that used to exit 0 with null or wrong truths, die with a bare Boost error or
# std::bad_alloc, or run without end (docs/config.md, "Parameter bounds" and "Pre-flight").
dir_gen() {  # dir_gen ALPHA MAP_OBJECT
  printf '{"family": "dirichlet", "classes": 3, "alpha": %s, "miscalibration": %s}' "$1" "$2"
}
identity='{"map": "identity"}'
eye='[[1, 0, 0], [0, 1, 0], [0, 0, 1]]'
expect_bad alpha_1e300 "$(config 5 50 "$(dir_gen 1e300 "$identity")" "$est_ok")" \
  '/generator/alpha|alpha = 1e+300: must be >= 0.0001 and <= 1000'
expect_bad alpha_2000 "$(config 5 50 "$(dir_gen 2000 "$identity")" "$est_ok")" \
  '/generator/alpha|alpha = 2000: must be >= 0.0001 and <= 1000'
expect_bad alpha_tiny_element "$(config 5 50 "$(dir_gen '[1, 1e-300, 1]' "$identity")" "$est_ok")" \
  '/generator/alpha/1|alpha[1] = 1e-300: must be >= 0.0001 and <= 1000'
expect_bad temperature_1e17 \
  "$(config 5 50 "$(gen_with_map '{"map": "temperature", "temperature": 1e17}')" "$est_ok")" \
  '/generator/miscalibration/temperature|temperature = 1e+17: must be >= 0.0001 and <= 1e+06'
expect_bad temperature_1e-300 \
  "$(config 5 50 "$(gen_with_map '{"map": "temperature", "temperature": 1e-300}')" "$est_ok")" \
  '/generator/miscalibration/temperature|temperature = 1e-300: must be >= 0.0001 and <= 1e+06'
expect_bad gamma_1e300 "$(config 5 50 "$(gen_with_map '{"map": "top_label", "gamma": 1e300}')" "$est_ok")" \
  '/generator/miscalibration/gamma|gamma = 1e+300: must be >= 0.0001 and <= 100'
expect_bad quantize_levels_1 "$(config 5 50 "$(gen_with_map '{"map": "quantize", "levels": 1}')" "$est_ok")" \
  '/generator/miscalibration/levels|expected an integer >= 2, found 1'
expect_bad quantize_levels_5000 "$(config 5 50 "$(gen_with_map '{"map": "quantize", "levels": 5000}')" "$est_ok")" \
  '/generator/miscalibration/levels|levels = 5000: must be <= 1000'
expect_bad exponent_1e300 \
  "$(config 5 50 "$(gen_with_map '{"map": "power", "exponents": [1, 1e300, 1]}')" "$est_ok")" \
  '/generator/miscalibration/exponents/1|exponents[1] = 1e+300: must be >= 0.0001 and <= 100'
expect_bad bias_1e308 \
  "$(config 5 50 "$(gen_with_map "{\"map\": \"affine_logit\", \"weights\": $eye, \"bias\": [1e308, 0, -1e308]}")" "$est_ok")" \
  '/generator/miscalibration/bias/0|bias[0] = 1e+308: must be >= -700 and <= 700' \
  '/generator/miscalibration/bias/2|bias[2] = -1e+308: must be >= -700 and <= 700'
expect_bad weight_1e308 \
  "$(config 5 50 "$(gen_with_map '{"map": "affine_logit", "weights": [[1e308, 0, 0], [0, 1, 0], [0, 0, 1]]}')" "$est_ok")" \
  '/generator/miscalibration/weights/0/0|weights[0] = 1e+308: must be >= -10000 and <= 10000'
expect_bad label_noise_alpha_1e-300 \
  "$(config 5 50 '{"family": "label_noise", "classes": 3, "alpha": 1e-300, "weight": 0.2}' "$est_ok")" \
  '/generator/alpha|alpha = 1e-300: must be >= 0.0001 and <= 1000'
expect_bad class_conditional_1e300 \
  "$(config 5 50 '{"family": "class_conditional", "classes": 3, "concentration": 1e300, "correct_class": 4}' "$est_ok")" \
  '/generator/concentration|concentration = 1e+300: must be >= 0.0001 and <= 1000'
expect_bad beta_binary_a_tiny \
  "$(config 5 50 '{"family": "beta_binary", "a": 1e-300, "b": 1}' "$est_ok")" \
  '/generator/a|a = 1e-300: must be >= 0.01 and <= 1000'
expect_bad smooth_ece_bandwidth_1e-300 \
  "$(config 5 50 "$gen_ok" '[{"name": "smooth_ece", "bandwidth": 1e-300}]')" \
  '/estimators/0/bandwidth|in [1e-4, 1]'
expect_bad bins_1e9 "$(config 5 50 "$gen_ok" '[{"name": "ece", "bins": 1e9}]')" \
  '/estimators/0/bins|bins = 1000000000: must be <= 1000000'
expect_bad triage_1e308 \
  '{"scenario": "decision", "replicates": 5, "sample_size": 50,
    "generator": {"family": "dirichlet", "classes": 2, "alpha": 0.5},
    "decision": {"task": "triage", "disease": 1, "benefit": 1e308, "harm": 1e308},
    "requirement": {"metric": "expected_utility", "at_least": 0.4}}' \
  '/decision/benefit|benefit = 1e+308: must be > 0 and <= 1e6' \
  '/decision/harm|harm = 1e+308: must be > 0 and <= 1e6'
# Pre-flight: memory (n x K doubles per worker) and work, refused before anything is created.
expect_bad sample_size_1e12 "$(config 5 1e12 "$gen_ok" "$est_ok")" \
  '/sample_size|of memory (sample size 1e+12 x classes 3 x 4 doubles per worker'
expect_bad replicates_1e12 "$(config 1e12 50 "$gen_ok" "$est_ok")" \
  '/replicates|more than calbench'"'"'s limit of 1e+10'
expect_bad truth_samples_1e15 "$(config 5 50 "$gen_ok" "$est_ok" '"truth": {"samples": 1e15}')" \
  '/truth/samples|the truth engine may draw 3e+15 numbers (1 cells x truth.samples 1e+15 x classes 3)'
expect_bad swept_sample_size \
  "$(config 5 50 "$gen_ok" "$est_ok" '"sweep": {"sample_size": [50, 1e13]}')" \
  '/sweep/sample_size/1|of memory (sample size 1e+13 x classes 3'

# Bounds added by the third pass (docs/config.md, "Parameter bounds"): estimator bandwidths,
# the external timeout, decision utilities and odds, the reliability section; the truth
# engine's memory and the other truth sample counts in the pre-flight.
dec_cfg() {  # dec_cfg CLASSES DECISION [EXTRA]
  printf '{"scenario": "decision", "replicates": 5, "sample_size": 50,
    "generator": {"family": "dirichlet", "classes": %s, "alpha": 0.5}, "decision": %s%s}' \
    "$1" "$2" "${3:+, $3}"
}
expect_bad kde_canonical_bandwidth_1e-300 \
  "$(config 5 50 "$gen_ok" '[{"name": "kde_canonical", "bandwidth": 1e-300}]')" \
  '/estimators/0/bandwidth|expected "loo" or a number in [1e-5, 1e3], found 1e-300'
expect_bad skce_bandwidth_1e-300 \
  "$(config 5 50 "$gen_ok" '[{"name": "skce", "bandwidth": 1e-300}]')" \
  '/estimators/0/bandwidth|bandwidth = 1e-300: must be in [1e-3, 1e3]'
expect_bad external_timeout_1e300 \
  "$(config 5 50 "$gen_ok" '[{"name": "external", "command": ["true"], "target": "accuracy", "timeout": 1e300}]')" \
  '/estimators/0/timeout|timeout = 1e+300: must be in [1e-3, 3.2e7]'
expect_bad cost_matrix_1e308 \
  "$(dec_cfg 2 '{"task": "cost_matrix", "utility": [[1e308, 0], [0, 1]]}')" \
  '/decision/utility/0/0|utility[0][0] = 1e+308: must be in [-1e6, 1e6]'
expect_bad abstain_1e308 \
  "$(dec_cfg 2 '{"task": "cost_matrix", "utility": [[1, 0], [0, 1]], "abstain": {"utility": 1e308}}')" \
  '/decision/abstain/utility|abstain utility = 1e+308: must be in [-1e6, 1e6]'
expect_bad selective_cost_1e308 "$(dec_cfg 3 '{"task": "selective", "cost": 1e308}')" \
  '/decision/cost|cost = 1e+308: must be >= 0 and <= 1e6'
expect_bad betting_odds_near_1 "$(dec_cfg 2 '{"task": "betting", "odds": [1.0000000000000002, 2]}')" \
  '/decision/odds/0|must be >= 1.000001 (decimal odds)'
expect_bad reliability_bins_1e12 "$(config 5 50 "$gen_ok" "$est_ok" '"reliability": {"bins": 1e12}')" \
  '/reliability/bins|bins = 1000000000000: must be <= 1000000'
expect_bad reliability_samples_1e15 "$(config 5 50 "$gen_ok" "$est_ok" '"reliability": {"samples": 1e15}')" \
  '/reliability/samples|the truth engine may draw 3e+15 numbers (1 cells x reliability.samples 1e+15'
expect_bad truth_memory_classes_1e6 \
  "$(config 5 50 '{"family": "label_noise", "classes": 1e6, "weight": 0.1}' '[{"name": "accuracy"}]')" \
  '/generator/classes|the ground truth needs about 676 GB of memory (classes 1e+06: 1e+06 x 0.000676 GB'
expect_bad recalibrator_samples_1e15 \
  "$(dec_cfg 2 '{"task": "triage"}' '"recalibrator": {"method": {"name": "temperature"}, "fit_size": 100, "samples": 1e15}')" \
  '/recalibrator/samples|the truth engine may draw 2e+15 numbers'
# Scenario recalibration's optional `decision` (docs/recalibration.md §4b): the decision
# scenario's parser, checked against the generator's K.
recal_decision() {
  printf '{"scenario": "recalibration", "replicates": 2, "fit_size": 100, "test_size": 100,
  "generator": {"family": "dirichlet", "classes": 2, "alpha": 0.5}, "estimators": %s,
  "methods": [{"name": "temperature"}], "decision": %s}' "$est_ok" "$1"
}
expect_bad recalibration_decision_unknown_field \
  "$(recal_decision '{"task": "cost_matrix", "utility": [[0, -1], [-4, 0]], "cost": 3}')" \
  '/decision/cost|unknown key; valid keys: abstain, task, utility'
expect_bad recalibration_decision_matrix_size \
  "$(recal_decision '{"task": "cost_matrix", "utility": [[0, -1, 0], [-4, 0, 0], [0, 0, 0]]}')" \
  '/decision/utility|expected a 2 x 2 array' '/decision/utility/0|expected an array of 2 numbers' \
  '/decision/utility/1|expected an array of 2 numbers' '/decision/utility/2|expected an array of 2 numbers'
# The xgboost recalibrator's parameters (docs/recalibration.md §2a): each bad one named by its
# pointer, exit 2, nothing written.
recal_methods() {
  printf '{"scenario": "recalibration", "replicates": 2, "fit_size": 100, "test_size": 100,
  "generator": {"family": "dirichlet", "classes": 2, "alpha": 0.5}, "estimators": %s,
  "methods": %s}' "$est_ok" "$1"
}
expect_bad recalibration_xgboost_parameters \
  "$(recal_methods '[{"name": "xgboost", "learning_rate": 1.5, "folds": 0}]')" \
  '/methods/0/learning_rate|learning_rate = 1.5: must be in (0, 1]' \
  '/methods/0/folds|expected an integer >= 1, found 0'

# ---- usage ----------------------------------------------------------------------------------
# expect_status STATUS PHRASE_IN_OUTPUT ARGS...: stdout and stderr together must contain PHRASE.
expect_status() {
  local want=$1 phrase=$2
  shift 2
  cases=$((cases + 1))
  local output status
  output=$("$bin" "$@" 2>&1)
  status=$?
  [ "$status" -eq "$want" ] || fail "calbench $*: exit status $status, expected $want; output:
$output"
  [[ "$output" == *"$phrase"* ]] || fail "calbench $*: output lacks \"$phrase\":
$output"
}

expect_status 2 "CONFIG is required" run
expect_status 2 "--threads" run "$src/tests/data/tiny.json" --threads 0 --out "$work/out_threads"
[ -e "$work/out_threads" ] && fail "run --threads 0 wrote its output directory"
# Integer options are range-checked on their text (CLI11 read -1 into an unsigned as 2^64 - 1).
printf '0,0.6,0.4\n1,0.3,0.7\n' >"$work/two_rows.csv"
expect_status 2 "--threads: Value -1 not in range 1 to 4096" run "$src/tests/data/tiny.json" --threads -1
expect_status 2 "--seed: must be an integer in [0, 2^64 - 1], found -1" eval "$work/two_rows.csv" --seed -1
expect_status 2 "found 99999999999999999999999" eval "$work/two_rows.csv" --seed 99999999999999999999999
expect_status 2 "--runs: Value -1 not in range 1 to 1000" bench --runs -1
expect_status 2 "--out: must not be empty" run "$src/tests/data/tiny.json" --out ""
expect_status 2 "--shard: must be I/N with 1 <= I <= N" run "$src/tests/data/tiny.json" --shard 0/3
expect_status 2 "--shard: must be I/N with 1 <= I <= N" run "$src/tests/data/tiny.json" --shard -1/3
expect_status 2 "--shard: must be I/N with 1 <= I <= N" run "$src/tests/data/tiny.json" --shard 4/3
expect_status 2 "--threads: Value 99999 not in range 1 to 4096" run "$src/tests/data/tiny.json" --threads 99999
expect_status 2 "--seed: must be an integer in [0, 2^64 - 1], found -1" fit "$work/two_rows.csv" --seed -1
# Every integer option of every subcommand (CLI11 ranges on the text).
expect_status 2 "--threads" merge "$work" --threads 0
expect_status 2 "--shards" slurm "$src/tests/data/tiny.json" --shards 0
expect_status 2 "--shards" slurm "$src/tests/data/tiny.json" --shards -1
expect_status 2 "--cpus" slurm "$src/tests/data/tiny.json" --shards 2 --cpus 0
expect_status 2 "--max-running" slurm "$src/tests/data/tiny.json" --shards 2 --max-running -1
expect_status 2 "--resamples" eval "$work/two_rows.csv" --resamples 0
expect_status 2 "--jackknife-groups" eval "$work/two_rows.csv" --jackknife-groups 1
expect_status 2 "--threads" eval "$work/two_rows.csv" --threads -1
expect_status 2 "--threads" plan "$work/two_rows.csv" --threads 0
expect_status 2 "--threads" bench --threads 0
# calbench plan: an interval method eval does not know, at its pointer with the valid names.
printf '{"generator": {"family": "dirichlet", "classes": 2, "alpha": 2}, "estimator": {"name": "brier"},\n "question": {"width": 0.1, "interval": "wald"}}\n' >"$work/plan_interval.json"
expect_status 2 "error: $work/plan_interval.json: /question/interval: unknown interval \"wald\"; valid: analytic, basic, bca, bias_corrected, consistency, default, fake, normal, percentile" \
  plan "$work/plan_interval.json" --out "$work/plan_interval.out"
[ -e "$work/plan_interval.out" ] && fail "plan with a bad interval wrote its result file"
expect_status 2 'unknown kind or name "bogus"; kinds: estimators, maps, families' list bogus
# `calbench list` is a one-screen summary (every kind's names); a kind or an entry in full.
expect_status 0 "recalibrators (" list
lines=$("$bin" list | wc -l)
[ "$lines" -le 40 ] || fail "calbench list prints $lines lines, more than a screen (40)"
expect_status 0 "equal_mass" list estimators
expect_status 0 "bins        integer  default 15" list ece
expect_status 0 "temperature  number" list temperature
expect_status 0 "bins        integer  default 15" list estimators
expect_status 0 "calbench" --version
expect_status 2 "" frobnicate
expect_status 2 "" # no subcommand

finish "$cases cases"
