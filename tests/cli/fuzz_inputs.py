#!/usr/bin/env python3
"""Mutation fuzzing of calbench's inputs (issue #38, "rerun of the same corpora").

Two corpora, each drawn from a seeded generator so a failure names a mutant anyone can rebuild:
- configs: every shipped config (configs/**/*.json and tests/data/*.json), each mutated at a
  random JSON place (a key deleted or renamed, a value replaced by another type, an extreme
  number, an empty or huge array...) or at a random byte (text cut, a byte changed), then
  `calbench validate`, and `calbench run` when validate accepts it and its pre-flight estimate
  is at most 5 s (a run ends with status 0 and its summary.json, 2 and no result set, or 1
  with a message: a method that failed everywhere);
- data: a small CSV (label, K probabilities) and an NPY pair for `calbench eval`, each mutated
  (a cell emptied or replaced by nan, inf, -1, 2, text; a column added or dropped; a line cut;
  a BOM; a header line; an NPY header or dtype damaged, the array cut), then `calbench eval` with
  a few resamples and a few estimators, and `calbench recalibrate fit` (temperature).

A mutant passes when calbench ends within the time limit (or is still showing progress at it)
with status 0 or 2; status 2 must
print a message on stderr that names the input file; status 0 must print no bare `nan`/`inf`
value outside a row that says it is not estimable. Anything else (a signal, status 1 or
another, a hang, a traceback) is a defect, printed with the mutant's seed and text.

Usage: fuzz_inputs.py CALBENCH_BINARY SOURCE_DIR [--mutants N] [--seed S] [--max-runs R]
                      [--keep DIR] [--accepted]
The default test run uses a small corpus (`--mutants 60 --max-runs 3`); `--mutants 800` is the
full rerun
(docs/durability.md, "Fuzzing").
"""
import argparse
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

TIME_LIMIT = 60  # seconds per call; every call of the corpus ends in well under a second or two

EXTREME_VALUES = [None, True, False, 0, -1, 1, 2, 0.5, -0.5, 1e308, -1e308, 1e-320, 2**64,
                  -(2**63), 3.7, "", "x", "nan", "inf", "-inf", [], [1], {}, {"x": 1}, "0",
                  "1e999", " 1", "\u00e9\u00e9", "=HYPERLINK(\"x\")", "a" * 5000]


def json_places(value, path=()):
    """Every (path, value) in a JSON document, the root included."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from json_places(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from json_places(item, path + (index,))


def set_place(document, path, new):
    if not path:
        return new
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return document


def mutate_json(document, rng):
    """A copy of `document` with one structural change, and what the change was."""
    doc = copy.deepcopy(document)
    places = [p for p in json_places(doc) if p[0]]
    path, value = rng.choice(places)
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    kind = rng.choice(["replace", "replace", "replace", "delete", "rename", "duplicate",
                       "scale", "empty"])
    if kind == "delete":
        del parent[path[-1]]
    elif kind == "rename" and isinstance(parent, dict):
        parent[str(path[-1]) + "_x"] = parent.pop(path[-1])
    elif kind == "duplicate" and isinstance(value, list):
        parent[path[-1]] = value + value
    elif kind == "scale" and isinstance(value, (int, float)) and not isinstance(value, bool):
        parent[path[-1]] = value * rng.choice([-1, 0, 10, 1000, 1e6, 1e-6])
    elif kind == "empty" and isinstance(value, (list, dict, str)):
        parent[path[-1]] = type(value)()
    else:
        kind = "replace"
        parent[path[-1]] = copy.deepcopy(rng.choice(EXTREME_VALUES))
    return json.dumps(doc, indent=1), f"{kind} at /{'/'.join(map(str, path))}"


def mutate_text(text, rng):
    """A copy of `text` cut short or with one byte changed."""
    where = rng.randrange(max(len(text), 1))
    if rng.random() < 0.5:
        return text[:where], f"cut at byte {where}"
    junk = rng.choice(["\x00", "}", "{", "\"", ",", "\\", "\u00ff", "9", "-", "\n"])
    return text[:where] + junk + text[where + 1:], f"byte {where} -> {junk!r}"


def make_data(rng_np, rows=60, classes=3):
    logits = rng_np.normal(size=(rows, classes)) * 2
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = np.array([rng_np.choice(classes, p=p) for p in probs])
    return probs, labels


def csv_text(probs, labels):
    return "".join(f"{y}," + ",".join(repr(float(v)) for v in p) + "\n"
                   for p, y in zip(probs, labels))


def mutate_csv(text, rng):
    lines = text.splitlines(keepends=True)
    kind = rng.choice(["cell", "cell", "cell", "add_column", "drop_column", "cut", "bom",
                       "header", "blank_line", "crlf", "duplicate_sep", "empty"])
    i = rng.randrange(len(lines))
    if kind == "cell":
        cells = lines[i].rstrip("\n").split(",")
        j = rng.randrange(len(cells))
        new = rng.choice(["", "nan", "inf", "-inf", "-1", "2", "abc", "1e999", "0x10",
                          "1.5", "-0", " 0.3", "3", "1e-400", "0.3.3", "+0.5", "\"0.5\""])
        cells[j] = new
        lines[i] = ",".join(cells) + "\n"
        what = f"line {i + 1} cell {j + 1} -> {new!r}"
    elif kind == "add_column":
        lines[i] = lines[i].rstrip("\n") + ",0.1\n"
        what = f"line {i + 1} one more column"
    elif kind == "drop_column":
        lines[i] = lines[i].rstrip("\n").rsplit(",", 1)[0] + "\n"
        what = f"line {i + 1} one column less"
    elif kind == "cut":
        text = "".join(lines)
        cut = rng.randrange(len(text))
        return text[:cut], f"cut at byte {cut}"
    elif kind == "bom":
        lines[0] = "\ufeff" + lines[0]
        what = "a byte-order mark"
    elif kind == "header":
        lines.insert(0, "label,p0,p1,p2\n")
        what = "a header line"
    elif kind == "blank_line":
        lines.insert(i, "\n")
        what = f"blank line before line {i + 1}"
    elif kind == "crlf":
        lines = [line.replace("\n", "\r\n") for line in lines]
        what = "CRLF line ends"
    elif kind == "duplicate_sep":
        lines[i] = lines[i].replace(",", ",,", 1)
        what = f"line {i + 1} an empty field"
    else:
        return "", "empty file"
    return "".join(lines), what


def npy_bytes(array):
    path = tempfile.mktemp(suffix=".npy")
    np.save(path, array)
    data = Path(path).read_bytes()
    os.unlink(path)
    return data


def mutate_npy(probs, labels, rng):
    """(probabilities NPY bytes, labels NPY bytes, what changed)."""
    p, y = probs.copy(), labels.copy()
    kind = rng.choice(["value", "value", "dtype", "labels", "shape", "header", "cut",
                       "fortran", "rows"])
    if kind == "value":
        i, j = rng.randrange(p.shape[0]), rng.randrange(p.shape[1])
        new = rng.choice([np.nan, np.inf, -np.inf, -1.0, 2.0, 0.0, 1.0, 1e-320, 1e308])
        p[i, j] = new
        what = f"p[{i},{j}] = {new}"
    elif kind == "dtype":
        dtype = rng.choice(["float32", "int64", "uint8", "float16", "complex128", "bool"])
        return npy_bytes(p.astype(dtype)), npy_bytes(y), f"probabilities as {dtype}"
    elif kind == "labels":
        new = rng.choice([-1, 3, 2**40, 99])
        i = rng.randrange(len(y))
        y[i] = new
        if rng.random() < 0.3:
            return npy_bytes(p), npy_bytes(y.astype(rng.choice(["float64", "int8",
                                                                 "uint64"]))), \
                f"labels[{i}] = {new}, another dtype"
        what = f"labels[{i}] = {new}"
    elif kind == "shape":
        shape = rng.choice([(p.size,), (p.shape[0], p.shape[1], 1), (p.shape[1], p.shape[0])])
        return npy_bytes(p.reshape(shape)), npy_bytes(y), f"probabilities reshaped {shape}"
    elif kind == "header":
        data = bytearray(npy_bytes(p))
        where = rng.randrange(8, 80)
        data[where] = rng.randrange(256)
        return bytes(data), npy_bytes(y), f"probabilities header byte {where} changed"
    elif kind == "cut":
        data = npy_bytes(p)
        cut = rng.randrange(len(data))
        return data[:cut], npy_bytes(y), f"probabilities cut at byte {cut}"
    elif kind == "fortran":
        return npy_bytes(np.asfortranarray(p)), npy_bytes(y), "Fortran order"
    else:
        return npy_bytes(p), npy_bytes(y[:-3]), "3 labels fewer than rows"
    return npy_bytes(p), npy_bytes(y), what


class Fuzzer:
    def __init__(self, binary, work):
        self.binary = binary
        self.work = work
        self.defects = []
        self.calls = 0
        self.runs = 0  # mutants also run
        self.slow = []  # calls stopped at the time limit while showing progress
        self.statuses = {}
        self.accepted = []  # (what, args) of every call that ended with status 0

    def call(self, args, inputs, what, values=False, failure_allowed=False):
        """Run calbench ARGS; record a defect unless it ends cleanly (`values`: its standard
        output is a table of estimates, where a bare nan or inf is a silent bad value;
        `failure_allowed`: a run, whose status 1 with a message is a documented end, e.g. a
        method failing in every cell). Returns the finished process, or None on a time-out."""
        self.calls += 1
        try:
            done = subprocess.run([self.binary, *args], cwd=self.work, capture_output=True,
                                  text=True, errors="replace", timeout=TIME_LIMIT,
                                  env={**os.environ, "CALBENCH_NO_REPORT": "1"})
        except subprocess.TimeoutExpired as timeout:
            # Slow but saying so (a progress line with its ETA: e.g. solving a grid of K = 100
            # targets in validate) is not a hang; silence is.
            said = timeout.stderr or b""
            said = said.decode(errors="replace") if isinstance(said, bytes) else said
            if "ETA" in said or "so far" in said:
                self.slow.append(what)
            else:
                self.defects.append((what, f"no answer in {TIME_LIMIT} s", args))
            return None
        status = done.returncode
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if status == 1 and failure_allowed and done.stderr.strip():
            pass
        elif status == 2:
            named = any(Path(name).name in done.stderr for name in inputs)
            if not done.stderr.strip() or not named:
                self.defects.append((what, "exit 2 without naming the input: " +
                                     done.stderr.strip()[:300], args))
        elif status == 0:
            self.accepted.append(what)
            for line in (done.stdout.splitlines() if values else []):
                words = line.replace(",", " ").split()
                if any(w in ("nan", "-nan", "inf", "-inf") for w in words) and \
                        "not estimable" not in line and "undefined" not in line:
                    self.defects.append((what, "a bare nan/inf in the output: " + line[:200],
                                         args))
                    break
        else:
            self.defects.append((what, f"exit {status}: " + done.stderr.strip()[-300:], args))
        if "Traceback" in done.stderr or "terminate called" in done.stderr:
            self.defects.append((what, "a crash message: " + done.stderr.strip()[-300:], args))
        return done


# A mutant whose pre-flight estimate is at most this is also run (`calbench run`).
RUN_ESTIMATE_LIMIT = 5.0  # seconds


def preflight_seconds(validate_output):
    """The pre-flight's estimate of `calbench validate`'s output in seconds, or None."""
    match = re.search(r"estimated time: up to about ([0-9.,]+) (s|min|h|days?)\b",
                      validate_output)
    if not match:
        return None
    scale = {"s": 1, "min": 60, "h": 3600, "day": 86400, "days": 86400}[match.group(2)]
    return float(match.group(1).replace(",", "")) * scale


def run_mutant(fuzzer, target, k, what):
    """`calbench run` the mutant: a finished run has its summary.json, a refused or failed one
    leaves no result set behind."""
    out = fuzzer.work / f"run-{k}"
    done = fuzzer.call(["run", str(target), "--out", str(out), "--threads", "1"], [str(target)],
                       "run of " + what, failure_allowed=True)
    if done is None:
        return
    finished = (out / "summary.json").exists()
    if done.returncode == 0 and not finished:
        fuzzer.defects.append(("run of " + what, "exit 0 without summary.json", [str(target)]))
    if done.returncode == 2 and finished:
        fuzzer.defects.append(("run of " + what, "exit 2 but a result set was written",
                               [str(target)]))
    shutil.rmtree(out, ignore_errors=True)


def fuzz_configs(fuzzer, source, rng, count, max_runs):
    configs = sorted(p for p in list((source / "configs").rglob("*.json")) +
                     list((source / "tests" / "data").glob("*.json"))
                     if "fakes" not in p.parts and "corpus" not in p.parts)
    # The small configs of the tests run in about a second: a third of the mutants come from
    # them, so that many mutants are run as well as validated.
    small = [p for p in configs if p.parent.name == "data"]
    for k in range(count):
        original = rng.choice(small if rng.random() < 1 / 3 else configs)
        text = original.read_text()
        if rng.random() < 0.8:
            mutant, what = mutate_json(json.loads(text), rng)
        else:
            mutant, what = mutate_text(text, rng)
        # In a copy of the original's folder, so its relative paths (fakes' rows) resolve.
        folder = fuzzer.work / "configs" / original.parent.relative_to(source)
        if not folder.exists():
            shutil.copytree(original.parent, folder)
        target = folder / f"fuzz-{k}.json"
        target.write_text(mutant)
        what = f"config {original.relative_to(source)}: {what}"
        done = fuzzer.call(["validate", str(target)], [str(target)], what)
        if done is not None and done.returncode == 0:
            seconds = preflight_seconds(done.stdout)
            if seconds is not None and seconds <= RUN_ESTIMATE_LIMIT and \
                    (max_runs is None or fuzzer.runs < max_runs):
                fuzzer.runs += 1
                run_mutant(fuzzer, target, k, what)
        target.unlink()


def fuzz_data(fuzzer, rng, count):
    rng_np = np.random.default_rng(rng.randrange(2**32))
    probs, labels = make_data(rng_np)
    estimators = json.dumps([{"name": "ece", "bins": 15}, {"name": "classwise_ece"},
                             {"name": "brier"}, {"name": "nll"}])
    for k in range(count):
        if rng.random() < 0.5:
            mutant, what = mutate_csv(csv_text(probs, labels), rng)
            data = fuzzer.work / f"m{k}.csv"
            data.write_text(mutant)
            inputs = [str(data)]
            extra = []
            what = "CSV " + what
        else:
            p_bytes, y_bytes, what = mutate_npy(probs, labels, rng)
            data, label_file = fuzzer.work / f"m{k}.npy", fuzzer.work / f"m{k}_y.npy"
            data.write_bytes(p_bytes)
            label_file.write_bytes(y_bytes)
            inputs = [str(data), str(label_file)]
            extra = ["--labels", str(label_file)]
            what = "NPY " + what
        fuzzer.call(["eval", str(data), *extra, "--resamples", "20", "--threads", "1",
                     "--estimators", estimators], inputs, "eval on " + what, values=True)
        model = fuzzer.work / f"m{k}.model.json"
        fuzzer.call(["recalibrate", "fit", str(data), *extra, "--method", "temperature",
                     "--out", str(model)], inputs, "recalibrate fit on " + what)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("source")
    parser.add_argument("--mutants", type=int, default=60,
                        help="mutants per corpus (configs, data)")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--max-runs", type=int, help="run at most this many config mutants "
                        "(each takes a few seconds; default: every one validate accepts)")
    parser.add_argument("--keep", help="keep the work directory here")
    parser.add_argument("--accepted", action="store_true",
                        help="list the mutants calbench accepted (status 0)")
    args = parser.parse_args()
    source = Path(args.source).resolve()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="calbench-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    fuzzer = Fuzzer(str(Path(args.binary).resolve()), work)
    rng = random.Random(args.seed)
    try:
        fuzz_configs(fuzzer, source, rng, args.mutants, args.max_runs)
        fuzz_data(fuzzer, rng, args.mutants)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    statuses = ", ".join(f"exit {s}: {n}" for s, n in sorted(fuzzer.statuses.items()))
    print(f"fuzz_inputs: {fuzzer.calls} calls on {2 * args.mutants} mutants (seed {args.seed}), "
          f"{fuzzer.runs} config mutants run; {len(fuzzer.slow)} stopped at {TIME_LIMIT} s "
          f"while showing progress; "
          f"{statuses}; {len(fuzzer.defects)} defects")
    for what, why, call in fuzzer.defects:
        print(f"DEFECT {what}\n  {why}\n  calbench {' '.join(call)}")
    if args.accepted:
        for what in fuzzer.accepted:
            print("accepted:", what)
    return 1 if fuzzer.defects else 0


if __name__ == "__main__":
    sys.exit(main())
