#!/usr/bin/env python3
"""Seeded fuzzing of calbench's public Python functions (issue #38, "Python adversarial inputs").

Call i of seed S is drawn by its own generator random.Random(f"{S}:{i}"), so a failure names a
call anyone can rebuild (`--only I`). Each call is one public function with one argument made
bad: probabilities with nan/inf/negative/> 1 values, wrong shapes (1-D, 3-D, K = 1, zero rows,
transposed), wrong dtypes (object, str, complex, bool, float16), labels out of range, negative,
fractional, of the wrong length or past int64, lists instead of arrays, non-contiguous and
Fortran-order arrays, huge or negative integers for sizes, resamples and seeds, estimator,
generator and method specs of the wrong type (a dict with an unknown name, a number, None), and
file paths that are directories, /dev/null, a FIFO, a missing or a garbage file. The functions:
calbench.estimate, sample, truth, Recalibrator (fit, predict_proba, load), reliability_table,
leaderboard, load, evaluate and fit (the last two run the `calbench` program, $CALBENCH_BIN).

The calls run in a worker process (this script with --worker) that reads call numbers on its
standard input and answers one JSON line per call; a worker that dies (a signal of the compiled
module) or does not answer within TIME_LIMIT is killed and restarted after that call. A call
passes when it returns a result or raises ValueError, TypeError, FileNotFoundError or one of
calbench's own errors (ResultsError, NotFittedError, FitRefused) whose message holds no raw C++
or library text ("[json.exception", "std::", "basic_string", pybind11's "incompatible function
arguments"...). A defect is anything else: a signal, a hang, another exception type (from
inside numpy, a MemoryError...), a raw message, an input the generator marks invalid returned
as a result, or a NaN returned. Each is printed with its call number and what was passed.

Usage: fuzz_python.py SOURCE_DIR [--calls N] [--seed S] [--only I] [--check-docs]
Default test run: 300 calls (ctest python.fuzz); 3,000 calls is the full corpus
(python.fuzz_full, label slow; --check-docs: docs/durability.md, "Fuzzing", quotes its
counts).
"""
import argparse
import json
import os
import random
import select
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

TIME_LIMIT = 30  # seconds per call; every call of the corpus ends in well under a second
MEMORY_LIMIT = 3 << 30  # bytes of address space for a worker: an allocation past it fails

# Raw texts of the C++ side and its libraries that must never reach a Python user.
RAW_TEXTS = ["[json.exception", "std::", "basic_string", "nlohmann", "what():",
             "incompatible function arguments", "Invoked with:", "terminate called",
             "calbench._core."]
DOCUMENTED = ("ValueError", "TypeError", "FileNotFoundError", "ResultsError", "NotFittedError",
              "FitRefused")

VALID, INVALID, EITHER = "valid", "invalid", "either"
K = 3


# ---- the corpus ------------------------------------------------------------------------------
def clean_data(rng, n=40, k=K):
    import numpy as np
    state = np.random.default_rng(rng.randrange(2**32))
    p = state.dirichlet(np.ones(k), size=n)
    y = np.array([state.choice(k, p=row) for row in p])
    return p, y


def bad_probabilities(rng, p, y):
    """(p, y, what, expectation): p or its form made bad, y kept consistent where it can be."""
    import numpy as np
    kind = rng.choice(["value", "value", "value", "one_d", "three_d", "k1", "zero_rows",
                       "transposed", "object", "str", "complex", "bool", "float16", "float32",
                       "list", "strided", "fortran", "int", "nested_ragged", "none", "scalar"])
    p = p.copy()
    if kind == "value":
        i, j = rng.randrange(p.shape[0]), rng.randrange(p.shape[1])
        value = rng.choice([float("nan"), float("inf"), -float("inf"), -0.25, 1.5, 1e308,
                            -1e-300])
        p[i, j] = value
        return p, y, f"p[{i},{j}] = {value}", INVALID
    if kind == "one_d":
        return p[:, 0], y, "p 1-D (n,)", EITHER  # documented for reliability_table only
    if kind == "three_d":
        return p[:, :, None], y, "p 3-D (n, K, 1)", INVALID
    if kind == "k1":
        return np.ones((p.shape[0], 1)), np.zeros(p.shape[0], dtype=int), "K = 1", EITHER
    if kind == "zero_rows":
        return p[:0], y[:0], "zero rows", INVALID
    if kind == "transposed":
        return p.T.copy(), y, "p transposed (K, n)", INVALID
    if kind == "object":
        return p.astype(object), y, "p of dtype object", EITHER
    if kind == "str":
        return p.astype(str), y, "p of dtype str", INVALID
    if kind == "complex":
        return p.astype(complex), y, "p of dtype complex", INVALID
    if kind == "bool":
        return p > 0.5, y, "p of dtype bool", INVALID
    if kind == "float16":
        return p.astype(np.float16), y, "p of dtype float16", EITHER
    if kind == "float32":
        return p.astype(np.float32), y, "p of dtype float32", EITHER
    if kind == "list":
        return p.tolist(), y.tolist(), "p and y as lists", VALID
    if kind == "strided":
        big = np.repeat(p, 2, axis=0)
        return big[::2], y, "p non-contiguous (every other row)", VALID
    if kind == "fortran":
        return np.asfortranarray(p), y, "p in Fortran order", VALID
    if kind == "int":
        return (p > 0.5).astype(int), y, "p of dtype int", INVALID
    if kind == "nested_ragged":
        rows = p.tolist()
        rows[1] = rows[1][:-1]
        return rows, y, "p a ragged list", INVALID
    if kind == "none":
        return None, y, "p None", INVALID
    return 0.5, y, "p a scalar", INVALID


def bad_labels(rng, p, y):
    import numpy as np
    kind = rng.choice(["range", "range", "negative", "fraction", "whole_float", "length",
                       "list", "str", "bool", "uint64", "two_d", "nan", "object"])
    y = y.copy()
    i = rng.randrange(len(y))
    if kind == "range":
        value = rng.choice([K, 99, 2**40, 2**62])
        y[i] = value
        return p, y, f"y[{i}] = {value}", INVALID
    if kind == "negative":
        y[i] = -1
        return p, y, f"y[{i}] = -1", INVALID
    if kind == "fraction":
        y = y.astype(float)
        y[i] = 0.5
        return p, y, f"y[{i}] = 0.5", INVALID
    if kind == "whole_float":
        return p, y.astype(float), "y as whole floats", VALID
    if kind == "length":
        return p, y[:-rng.randrange(1, 5)], "y shorter than p", INVALID
    if kind == "list":
        return p, y.tolist(), "y a list", VALID
    if kind == "str":
        return p, y.astype(str), "y of dtype str", INVALID
    if kind == "bool":
        return p, y.astype(bool), "y of dtype bool", EITHER
    if kind == "uint64":
        y = y.astype(np.uint64)
        y[i] = np.uint64(2**64 - 1)
        return p, y, f"y uint64, y[{i}] = 2^64-1", INVALID
    if kind == "two_d":
        return p, y[:, None], "y 2-D (n, 1)", EITHER
    if kind == "nan":
        y = y.astype(float)
        y[i] = float("nan")
        return p, y, f"y[{i}] = nan", INVALID
    return p, y.astype(object), "y of dtype object", EITHER


BAD_COUNTS = [-1, 0, 2**63, 2**64, 10**30, 1.5, "10", None, True, float("nan"), float("inf")]
BAD_SPECS = [{"name": "no_such_estimator"}, 3, None, "ece", {}, [], {"name": None},
             {"name": "ece", "bins": -1}, {"name": "ece", "bins": 1e308},
             {"name": "ece", "bins": float("nan")}, {"name": "ece", "bins": 2**64},
             {"name": "ece", "bins": "15"}, {"name": "ece", "extra": 1}, {"name": 3}]
BAD_METHODS = ["no_such_method", 3, None, {"name": "no_such_method"}, {}, [],
               {"name": "histogram_binning", "bins": -1}, {"name": "histogram_binning",
                                                           "bins": 2**64},
               {"name": "temperature", "extra": 1}, {"name": "kernel", "bandwidth": -1.0},
               {"name": "kernel", "bandwidth": float("nan")}]
GENERATOR = {"family": "dirichlet", "classes": 3, "alpha": 1.0}
BAD_GENERATORS = [None, 3, "dirichlet", {}, {"family": "no_such_family"},
                  dict(GENERATOR, alpha=-1), dict(GENERATOR, alpha=float("nan")),
                  dict(GENERATOR, classes=0), dict(GENERATOR, classes=1),
                  dict(GENERATOR, classes=2**40), dict(GENERATOR, classes=-3),
                  dict(GENERATOR, classes="3"),
                  dict(GENERATOR, miscalibration={"map": "temperature", "temperature": -1}),
                  dict(GENERATOR, miscalibration={"map": "no_such_map"}),
                  dict(GENERATOR, miscalibration=5)]


def bad_path(rng, work):
    """(path, what): a path calbench cannot read as data, a model or a result set."""
    kind = rng.choice(["directory", "devnull", "missing", "garbage", "empty", "fifo", "int",
                       "none", "bytes", "devzero"])
    if kind == "directory":
        return str(work), "a directory"
    if kind == "devnull":
        return "/dev/null", "/dev/null"
    if kind == "devzero":
        return "/dev/zero", "/dev/zero"
    if kind == "missing":
        return str(work / "no_such_file.npy"), "a missing file"
    if kind == "garbage":
        path = work / "garbage.json"
        path.write_bytes(bytes(range(256)) * 3)
        return str(path), "a garbage file"
    if kind == "empty":
        path = work / "empty.csv"
        path.write_text("")
        return str(path), "an empty file"
    if kind == "fifo":
        path = work / "fifo"
        if not path.exists():
            os.mkfifo(path)
        return str(path), "a FIFO"
    if kind == "int":
        return 3, "the number 3"
    if kind == "bytes":
        return b"\xff\xfe", "bytes b'\\xff\\xfe'"
    return None, "None"


def make_call(seed, index, work):
    """(what, thunk, expectation) of call `index`: its own generator, so any call rebuilds."""
    import numpy as np
    import pandas as pd
    import calbench
    rng = random.Random(f"{seed}:{index}")
    p, y = clean_data(rng)
    function = rng.choice(["estimate", "estimate", "estimate", "sample", "sample", "truth",
                           "recalibrator", "recalibrator", "predict", "load_model",
                           "reliability_table", "leaderboard", "load", "evaluate", "fit"])

    def bad_data():
        if rng.random() < 0.6:
            return bad_probabilities(rng, p, y)
        return bad_labels(rng, p, y)

    if function == "estimate":
        if rng.random() < 0.3:
            spec = rng.choice(BAD_SPECS)
            return (f"estimate({spec!r}, p, y)",
                    lambda: calbench.estimate(spec, p, y), INVALID)
        spec = rng.choice([{"name": "ece", "bins": 15}, {"name": "brier"}, {"name": "nll"},
                           {"name": "classwise_ece"}, {"name": "kde_canonical"}])
        bp, by, what, expect = bad_data()
        return (f"estimate({spec!r}, {what})",
                lambda: calbench.estimate(spec, bp, by), expect)
    if function == "sample":
        if rng.random() < 0.5:
            g = rng.choice(BAD_GENERATORS)
            return (f"sample({g!r}, 10, seed=1)", lambda: calbench.sample(g, 10, seed=1),
                    INVALID)
        argument = rng.choice(["n", "seed", "replicate", "cell"])
        value = rng.choice(BAD_COUNTS)
        kwargs = {"n": 10, "seed": 1, argument: value}
        # n = 0 and the large seeds/replicates/cells are documented values (< 2^64).
        expect = (EITHER if (argument != "n" and value in (0, 2**63, True))
                  else INVALID)
        return (f"sample(GENERATOR, {kwargs})",
                lambda: calbench.sample(GENERATOR, **kwargs), expect)
    if function == "truth":
        g = rng.choice(BAD_GENERATORS)
        return f"truth({g!r})", lambda: calbench.truth(g), INVALID
    if function == "recalibrator":
        if rng.random() < 0.4:
            method = rng.choice(BAD_METHODS)
            return (f"Recalibrator({method!r}).fit(p, y)",
                    lambda: calbench.Recalibrator(method).fit(p, y), INVALID)
        method = rng.choice(["temperature", "histogram_binning", "isotonic", "vector_scaling"])
        bp, by, what, expect = bad_data()
        return (f"Recalibrator({method!r}).fit({what})",
                lambda: calbench.Recalibrator(method).fit(bp, by).predict_proba(p), expect)
    if function == "predict":
        bp, _, what, expect = bad_probabilities(rng, p, y)
        if rng.random() < 0.2:
            return ("Recalibrator('temperature').predict_proba(p) before fit",
                    lambda: calbench.Recalibrator("temperature").predict_proba(p), INVALID)

        def predict():
            return calbench.Recalibrator("temperature").fit(p, y).predict_proba(bp)
        return f"Recalibrator('temperature').fit(p, y).predict_proba({what})", predict, expect
    if function == "load_model":
        path, what = bad_path(rng, work)
        return (f"Recalibrator.load({what})", lambda: calbench.Recalibrator.load(path),
                INVALID)
    if function == "reliability_table":
        if rng.random() < 0.4:
            bins = rng.choice(BAD_COUNTS)
            binning = rng.choice(["equal_width", "equal_mass", "no_such_binning", None, 3])
            valid = binning in ("equal_width", "equal_mass")
            return (f"reliability_table(p, y, bins={bins!r}, binning={binning!r})",
                    lambda: calbench.reliability_table(p, y, bins=bins, binning=binning),
                    EITHER if valid and bins is True else INVALID)
        bp, by, what, expect = bad_data()
        if what == "zero rows":  # an empty table (count 0 in every bin): a class never seen
            expect = EITHER
        return f"reliability_table({what})", lambda: calbench.reliability_table(bp, by), expect
    if function == "leaderboard":
        methods, cases = ["a", "b", "c"], [f"d{i}" for i in range(6)]
        values = np.array([[rng.random() for _ in methods] for _ in cases])
        frame = pd.DataFrame([{"method": m, "case": c, "brier": values[i, j]}
                              for i, c in enumerate(cases) for j, m in enumerate(methods)])
        kind = rng.choice(["nan", "key", "resamples", "level", "empty", "column", "string",
                           "seed", "missing"])
        kwargs = {"key": "brier", "resamples": 50, "elo_resamples": 10}
        expect = INVALID
        if kind == "nan":
            frame.loc[rng.randrange(len(frame)), "brier"] = float("nan")
            what = "a NaN value"
        elif kind == "key":
            kwargs["key"] = rng.choice(["no_such_key", 3, [], ["brier", "brier"]])
            what = f"key={kwargs['key']!r}"
            expect = EITHER if kwargs["key"] == ["brier", "brier"] else INVALID
        elif kind in ("resamples", "seed"):
            kwargs[kind] = rng.choice(BAD_COUNTS)
            what = f"{kind}={kwargs[kind]!r}"
            expect = EITHER if kind == "seed" and kwargs[kind] in (0, 2**63, True) else INVALID
        elif kind == "level":
            kwargs["level"] = rng.choice([0.0, 1.0, 1.5, -0.1, float("nan"), "0.95", None])
            what = f"level={kwargs['level']!r}"
        elif kind == "empty":
            frame = frame.iloc[:0]
            what = "an empty frame"
        elif kind == "column":
            frame = frame.drop(columns=[rng.choice(["method", "case"])])
            what = "a frame without a column"
        elif kind == "string":
            frame["brier"] = frame["brier"].astype(str)
            frame.loc[0, "brier"] = "x"
            what = "a text value"
        else:
            kwargs["missing"] = rng.choice(["no_such_rule", None, 3])
            frame.loc[0, "brier"] = float("nan")
            what = f"a NaN with missing={kwargs['missing']!r}"
        return (f"leaderboard(frame with {what}, {kwargs})",
                lambda: calbench.leaderboard(frame, **kwargs), expect)
    if function == "load":
        path, what = bad_path(rng, work)
        return f"load({what})", lambda: calbench.load(path), INVALID
    # evaluate and fit: the command line behind the Python call.
    data = work / f"data-{index}.csv"
    data.write_text("".join(f"{label}," + ",".join(repr(float(v)) for v in row) + "\n"
                            for row, label in zip(p, y)))
    if function == "evaluate":
        kind = rng.choice(["path", "estimators", "resamples", "level", "seed", "labels"])
        kwargs = {"resamples": 20, "threads": 1}
        target = str(data)
        if kind == "path":
            target, what = bad_path(rng, work)
        elif kind == "estimators":
            kwargs["estimators"] = rng.choice([[spec] for spec in BAD_SPECS if spec is not None]
                                              + ["not json", "[1, 2]", 3])
            what = f"estimators={kwargs['estimators']!r}"
        elif kind in ("resamples", "seed"):
            kwargs[kind] = rng.choice(BAD_COUNTS[:-1])
            what = f"{kind}={kwargs[kind]!r}"
        elif kind == "level":
            kwargs["level"] = rng.choice([0.0, 1.0, 1.5, -0.1, float("nan"), "x"])
            what = f"level={kwargs['level']!r}"
        else:
            kwargs["labels"], what = bad_path(rng, work)
            what = f"labels={what}"
        expect = VALID if kind == "labels" and kwargs["labels"] is None else INVALID
        if kwargs.get("resamples") is None and kind == "resamples":
            expect = VALID  # None: the default
        if kind == "seed" and kwargs["seed"] in (None, 0, 2**63, True):
            expect = EITHER
        if kwargs.get(kind) == "10":  # the command line's text, as `options` passes it
            expect = EITHER
        return (f"evaluate({what})", lambda: calbench.evaluate(target, **kwargs), expect)
    target, what = bad_path(rng, work)
    out = work / f"fit-{index}.json"
    return (f"fit({what})", lambda: calbench.fit(target, out=str(out), quiet=True), INVALID)


# ---- the worker: runs calls, answers one JSON line each --------------------------------------
def has_nan(value):
    import numpy as np
    import pandas as pd
    if isinstance(value, float):
        return value != value
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        return bool(np.isnan(value).any())
    if isinstance(value, pd.DataFrame):
        if "count" in value:  # a reliability table: an empty bin has no mean (NaN), by design
            value = value[value["count"] > 0]
        numbers = value.select_dtypes("number")
        return bool(numbers.isna().to_numpy().any())
    if isinstance(value, (tuple, list)):
        return any(has_nan(v) for v in value)
    return False


def judge(expect, thunk):
    """(outcome, None when the call passes, else why it does not); the outcome is "returned"
    or the exception's type."""
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = thunk()
    except Exception as e:  # noqa: BLE001: every exception is judged
        name = type(e).__name__
        message = str(e)
        raw = [text for text in RAW_TEXTS if text in message]
        if name not in DOCUMENTED:
            frame = traceback.extract_tb(e.__traceback__)[-1]
            return name, (f"{name} (not a documented kind), raised at "
                          f"{Path(frame.filename).name}:{frame.lineno}: {message[:300]}")
        if raw:
            return name, f"{name} with raw library text {raw[0]!r}: {message[:300]}"
        if not message.strip():
            return name, f"{name} without a message"
        return name, None
    if expect == INVALID:
        return "returned", f"returned a result for an invalid input: {str(result)[:200]!r}"
    if has_nan(result):
        return "returned", f"returned NaN: {str(result)[:200]!r}"
    return "returned", None


def worker(seed, work):
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    work = Path(work)
    for line in sys.stdin:
        index = int(line)
        what, outcome = f"call {index}", "fuzzer error"
        try:
            what, thunk, expect = make_call(seed, index, work)
            outcome, why = judge(expect, thunk)
        except Exception as e:  # noqa: BLE001: a broken corpus entry is the fuzzer's defect
            why = f"the fuzzer failed to build the call: {type(e).__name__}: {e}"
        print(json.dumps({"index": index, "what": what, "outcome": outcome, "defect": why}),
              flush=True)


# ---- the driver ------------------------------------------------------------------------------
class Driver:
    def __init__(self, seed, work):
        self.seed, self.work, self.process = seed, work, None

    def start(self):
        self.process = subprocess.Popen(
            [sys.executable, "-B", __file__, "--worker", str(self.seed), str(self.work)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=self.work, env={**os.environ, "CALBENCH_NO_REPORT": "1"})

    def stop(self):
        if self.process:
            self.process.kill()
            self.process.wait()
            self.process = None

    def call(self, index):
        """The worker's answer for call `index`, or a defect for a crash or a hang."""
        if self.process is None:
            self.start()
        self.process.stdin.write(f"{index}\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], TIME_LIMIT)
        if not ready:
            self.stop()
            return {"index": index, "what": f"call {index}", "outcome": "hang",
                    "defect": f"no answer in {TIME_LIMIT} s (a hang)"}
        line = self.process.stdout.readline()
        if line:
            return json.loads(line)
        status = self.process.wait()
        stderr = self.process.stderr.read()[-300:]
        self.process = None
        return {"index": index, "what": f"call {index}", "outcome": "crash",
                "defect": f"the worker died (status {status}): {stderr.strip()}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", nargs="?")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--only", type=int, help="run call ONLY alone (its what and verdict)")
    parser.add_argument("--check-docs", action="store_true",
                        help="require docs/durability.md to quote these counts of ends")
    parser.add_argument("--worker", nargs=2, metavar=("SEED", "WORK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(int(args.worker[0]), args.worker[1])
    if args.source:
        python = str(Path(args.source).resolve() / "python")
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [python] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    binary = os.environ.get("CALBENCH_BIN")
    if not (binary and os.access(binary, os.X_OK)):
        print("fuzz_python: CALBENCH_BIN must name the calbench program (evaluate and fit run it)")
        return 2
    start = time.monotonic()
    indices = [args.only] if args.only is not None else range(args.calls)
    defects, functions, outcomes = [], {}, {}
    with tempfile.TemporaryDirectory(prefix="calbench-pyfuzz-") as work:
        driver = Driver(args.seed, work)
        try:
            for index in indices:
                answer = driver.call(index)
                name = answer["what"].split("(")[0]
                functions[name] = functions.get(name, 0) + 1
                outcomes[answer["outcome"]] = outcomes.get(answer["outcome"], 0) + 1
                if answer["defect"]:
                    defects.append(answer)
                if args.only is not None:
                    print(answer["what"])
        finally:
            driver.stop()
    counts = ", ".join(f"{name}: {n}" for name, n in sorted(functions.items()))
    ends = ", ".join(f"{name}: {n}" for name, n in sorted(outcomes.items()))
    print(f"fuzz_python: {len(indices)} calls (seed {args.seed}) in "
          f"{time.monotonic() - start:.1f} s; {counts}; ends: {ends}; {len(defects)} defects")
    for answer in defects:
        print(f"DEFECT call {answer['index']} (--seed {args.seed} --only {answer['index']}): "
              f"{answer['what']}\n  {answer['defect']}")
    if args.check_docs:
        text = " ".join((Path(args.source) / "docs" / "durability.md").read_text().split())
        quoted = [f"{n:,} {'results' if name == 'returned' else name}"
                  for name, n in sorted(outcomes.items())]
        quoted.append(f"seed {args.seed}, {len(indices):,} calls")
        missing = [q for q in quoted if q not in text]
        if missing:
            print("docs/durability.md does not quote: " + "; ".join(missing))
            return 1
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
