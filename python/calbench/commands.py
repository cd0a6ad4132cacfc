"""`calbench fit`, `calbench eval`, `calbench plan` and `calbench gate` from Python (docs/python.md,
"Your own model"; docs/gates.md).

These commands are written in the command line's runner (runners/fit.cpp, runners/eval.cpp,
runners/plan.cpp, runners/gate.cpp: the verdict, the predictions, the advice, the plan's search
and the gate's members print and decide there), so Python runs the same program rather than a
second copy of it: each function runs the `calbench` executable with the command's flags, reads
its JSON result and returns it as a dict. The executable is
$CALBENCH_BIN when set, else `calbench` on PATH (scripts/setup.sh links it into
/usr/local/bin); a venv (`pip install ./python`) finds it the same way.

Bad input raises ValueError with the command's own message (file, JSON pointer or line, and
what was expected); nothing is written then, as on the command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import Any

from ._atomic import write_atomically

__all__ = ["FitRefused", "evaluate", "executable", "fit", "gate", "gate_curve", "plan"]


class FitRefused(RuntimeError):
    """`calbench fit` judged the fake POOR and did not write `out` (force=True writes it);
    `report` is the fit's JSON report with its verdict."""

    def __init__(self, message: str, report: dict):
        super().__init__(message)
        self.report = report


def executable() -> str:
    """The `calbench` program these functions run: $CALBENCH_BIN, else `calbench` on PATH."""
    named = os.environ.get("CALBENCH_BIN")
    if named:
        if not (os.path.isfile(named) and os.access(named, os.X_OK)):
            raise FileNotFoundError(f"CALBENCH_BIN={named}: not an executable file")
        return named
    found = shutil.which("calbench")
    if found is None:
        raise FileNotFoundError(
            "no `calbench` program: run scripts/setup.sh (it puts calbench on PATH) or set "
            "CALBENCH_BIN to build/release/calbench")
    return found


def _run(arguments: list[str]) -> subprocess.CompletedProcess:
    result = subprocess.run([executable(), *arguments], capture_output=True, text=True)
    if result.returncode == 2:  # bad input: the command's message names the place
        raise ValueError(result.stderr.strip().removeprefix("error: "))
    return result


def _run_showing(arguments: list[str]) -> subprocess.CompletedProcess:
    """_run, with the command's stderr lines also copied to sys.stderr as they come (its
    progress lines; in a notebook they appear under the cell), except its `error:` lines,
    which the caller raises."""
    lines: list[str] = []
    with subprocess.Popen([executable(), *arguments], text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as child:
        def copy():
            for line in child.stderr:
                lines.append(line)
                if not line.startswith("error: "):
                    try:
                        sys.stderr.write(line)
                        sys.stderr.flush()
                    except (OSError, ValueError):
                        pass
        reader = threading.Thread(target=copy, daemon=True)
        reader.start()
        stdout = child.stdout.read()
        child.wait()
        reader.join()
    result = subprocess.CompletedProcess(child.args, child.returncode, stdout, "".join(lines))
    if result.returncode == 2:  # bad input: the command's message names the place
        raise ValueError(result.stderr.strip().removeprefix("error: "))
    return result


def _path(value, argument: str) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{argument} must be a path, not {type(value).__name__}")
    return os.fspath(value)


def _data_arguments(command: str, data, labels, renormalize: bool, logits: bool) -> list[str]:
    """`calbench COMMAND DATA --json` with the flags that say how to read a model's outputs."""
    arguments = [command, _path(data, "data"), "--json"]
    if labels is not None:
        arguments += ["--labels", _path(labels, "labels")]
    if renormalize:
        arguments.append("--renormalize")
    if logits:
        arguments.append("--logits")
    return arguments


def fit(data, out=None, *, labels=None, renormalize: bool = False, logits: bool = False,
        map: str | None = None, family: str | None = None, force: bool = False,
        seed: int | None = None, threads: int | None = None,
        options: list[str] | tuple[str, ...] = (), quiet: bool = False) -> dict:
    """Fits a fake classifier to a model's outputs: `calbench fit DATA --json` (docs/fit.md).

    `data` is a CSV or NPY file as the command line reads it (`labels`: the NPY labels). With
    `out`, the runnable config is written there (what a plan's "generator" names), unless the
    verdict is POOR: then FitRefused is raised (its `report` holds the verdict) unless
    force=True. `options` adds any other flag of `calbench fit --help`. Returns the JSON report
    (the fitted family and map, the verdict, the predictions). The fit's progress lines (a
    phase longer than 2 s; a fit of 20,000 rows takes tens of seconds) are copied to
    sys.stderr as they come; quiet=True shows none."""
    arguments = _data_arguments("fit", data, labels, renormalize, logits)
    if map is not None:
        arguments += ["--map", str(map)]
    if family is not None:
        arguments += ["--family", str(family)]
    if out is not None:
        arguments += ["--out", _path(out, "out")]
    if force:
        arguments.append("--force")
    if seed is not None:
        arguments += ["--seed", str(int(seed))]
    if threads is not None:
        arguments += ["--threads", str(int(threads))]
    arguments += [str(o) for o in options]
    result = _run(arguments) if quiet else _run_showing(arguments)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"calbench fit exited {result.returncode}: "
                           f"{(result.stderr or '').strip()}") from None
    if result.returncode != 0:
        raise FitRefused((result.stderr or "the verdict is POOR").strip(), report)
    return report


def evaluate(data, *, labels=None, renormalize: bool = False, logits: bool = False,
             estimators: Any = None, interval: str | None = None, advice: bool = False,
             level: float | None = None, resamples: int | None = None,
             fake_samples: int | None = None, seed: int | None = None,
             threads: int | None = None, options: list[str] | tuple[str, ...] = (),
             quiet: bool = True) -> dict:
    """A model's metrics with intervals: `calbench eval DATA --json` (docs/eval.md).

    `data` as in `fit`. `estimators` is a JSON array (a list of dicts, or its text or a file)
    as `--estimators` takes; `interval` any `--interval` name ("fake": calibrated on the fake
    fitted to the rows, docs/intervals.md); advice=True adds each estimator's predicted bias,
    sd and RMSE at this n and the estimator to report (the fake interval implies it). Returns
    the JSON report: "estimators" (value, interval, ci, p_calibrated, note; with the fake
    interval also default_ci, the default interval its hull joined) and, with advice,
    "advice" (the fake's family and verdict, "recommended", and per estimator target,
    reference, bias, bias_se, sd, rmse). quiet=False shows the progress lines on stderr."""
    arguments = _data_arguments("eval", data, labels, renormalize, logits)
    if estimators is not None:
        arguments += ["--estimators",
                      estimators if isinstance(estimators, str) else json.dumps(estimators)]
    if interval is not None:
        arguments += ["--interval", str(interval)]
    if advice:
        arguments.append("--advice")
    for flag, value in (("--level", level), ("--resamples", resamples),
                        ("--fake-samples", fake_samples), ("--seed", seed),
                        ("--threads", threads)):
        if value is not None:
            arguments += [flag, str(value)]
    arguments += [str(o) for o in options]
    result = _run(arguments) if quiet else _run_showing(arguments)
    if result.returncode != 0:
        raise RuntimeError(f"calbench eval exited {result.returncode}: "
                           f"{(result.stderr or '').strip()}")
    return json.loads(result.stdout)


def _file_command(command: str, document: Any, argument: str, out, threads, quiet,
                  options=()) -> dict:
    """Runs `calbench COMMAND FILE --out RESULT` on a file's path or a dict's content (written
    to a temporary in the current directory, since the command reads relative paths from the
    file's folder) and returns RESULT's JSON; with `out` also writes it there, whole or not at
    all. Exit 2 raises ValueError with the message, the temporary's name replaced by
    `calbench.COMMAND(ARGUMENT)`."""
    written = None
    if isinstance(document, dict):
        handle, written = tempfile.mkstemp(prefix=f".calbench-{command}-", suffix=".json",
                                           dir=".")
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            json.dump(document, f)
        source = written
    else:
        source = _path(document, argument)
    directory = tempfile.mkdtemp(prefix=f"calbench-{command}-")
    try:
        target = os.path.join(directory, f"{command}.json")
        arguments = [command, source, "--out", target, *options]
        if threads is not None:
            arguments += ["--threads", str(int(threads))]
        if quiet:
            arguments.append("--quiet")
        result = subprocess.run([executable(), *arguments], text=True,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if quiet else None)
        if result.returncode == 2:
            message = (result.stderr or "").strip()
            if written is not None:  # the message names the temporary: name the argument
                message = message.replace(written, f"calbench.{command}({argument})")
            raise ValueError(message.removeprefix("error: "))
        if result.returncode != 0:
            raise RuntimeError(f"calbench {command} exited {result.returncode}: "
                               f"{(result.stderr or '').strip()}")
        with open(target, encoding="utf-8") as f:
            answer = json.load(f)
        if out is not None:  # whole or not at all: a private temporary beside it, renamed
            with open(target, "rb") as f:
                write_atomically(_path(out, "out"), f.read())
        return answer
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        if written is not None:
            os.unlink(written)


def plan(plan: Any, out=None, *, threads: int | None = None, quiet: bool = True) -> dict:
    """Plans the labelled sample an audit needs: `calbench plan PLAN` (docs/plan.md).

    `plan` is a plan file's path or its content as a dict; a dict's relative paths (a
    "generator" written by `fit(..., out=...)`) are read from the current directory. With `out`
    the result is also written there, as `calbench plan --out`. Returns the result (JSON:
    "answer" holds n and its interval). quiet=False shows the progress lines on stderr."""
    return _file_command("plan", plan, "plan", out, threads, quiet)


def gate(gate: Any, out=None, *, threads: int | None = None, quiet: bool = True) -> dict:
    """What an acceptance gate risks: `calbench gate GATE` (docs/gates.md).

    `gate` is a gate file's path or its content as a dict (relative paths read from the current
    directory). With `out` the result is also written there, as `calbench gate --out`. Returns
    the result (JSON: "points" is the OC curve, "risks" the false-reject and false-accept rates,
    "design" the design search's answer); `gate_curve(result)` is its OC curve as a DataFrame.
    quiet=False shows the progress lines on stderr."""
    return _file_command("gate", gate, "gate", out, threads, quiet)


def gate_curve(result: dict):
    """The OC curve of a `gate(...)` result as a pandas DataFrame, one row per point: the true
    error asked for (`value`), the member's truth (`true_error`, `truth_method`,
    `truth_error`), its `scale`, `p_pass` and its `se`, and per clause `pass_LABEL` and
    `mean_LABEL`."""
    import pandas as pd

    rows = []
    for point in result["points"]:
        row = {key: point[key] for key in ("value", "true_error", "truth_method",
                                           "truth_error", "scale", "p_pass", "se")}
        for clause in point["clauses"]:
            row["pass_" + clause["label"]] = clause["pass"]
            row["mean_" + clause["label"]] = clause["mean"]
        rows.append(row)
    return pd.DataFrame(rows)
