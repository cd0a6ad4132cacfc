"""`calbench fit`, `calbench plan` and `calbench eval` from Python (docs/python.md, "Your own
model").

These commands are written in the command line's runner (runners/fit.cpp, runners/plan.cpp,
runners/eval.cpp: the verdict, the predictions and the plan's search print and decide there), so Python runs the
same program rather than a second copy of it: each function runs the `calbench` executable with
the command's flags, reads its JSON result and returns it as a dict. The executable is
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
import tempfile
from typing import Any

from ._atomic import write_atomically

__all__ = ["FitRefused", "evaluate", "executable", "fit", "plan"]


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


def _path(value, argument: str) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{argument} must be a path, not {type(value).__name__}")
    return os.fspath(value)


def fit(data, out=None, *, labels=None, renormalize: bool = False, logits: bool = False,
        map: str | None = None, family: str | None = None, force: bool = False,
        seed: int | None = None, threads: int | None = None,
        options: list[str] | tuple[str, ...] = (), quiet: bool = True) -> dict:
    """Fits a fake classifier to a model's outputs: `calbench fit DATA --json` (docs/fit.md).

    `data` is a CSV or NPY file as the command line reads it (`labels`: the NPY labels). With
    `out`, the runnable config is written there (what a plan's "generator" names), unless the
    verdict is POOR: then FitRefused is raised (its `report` holds the verdict) unless
    force=True. `options` adds any other flag of `calbench fit --help`. Returns the JSON report
    (the fitted family and map, the verdict, the predictions). quiet=False shows the fit's
    progress lines on stderr as it goes (a fit of 20,000 rows takes tens of seconds)."""
    arguments = ["fit", _path(data, "data"), "--json"]
    if labels is not None:
        arguments += ["--labels", _path(labels, "labels")]
    if renormalize:
        arguments.append("--renormalize")
    if logits:
        arguments.append("--logits")
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
    if quiet:
        result = _run(arguments)
    else:  # stderr passes through: the progress lines appear as the fit runs
        result = subprocess.run([executable(), *arguments], text=True, stdout=subprocess.PIPE)
        if result.returncode == 2:
            raise ValueError("calbench fit: bad input (exit 2; the message is above)")
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
    the JSON report: "estimators" (value, interval, ci, p_calibrated, note) and, with advice,
    "advice" (the fake's family and verdict, "recommended", and per estimator target,
    reference, bias, bias_se, sd, rmse). quiet=False shows the progress lines on stderr."""
    arguments = ["eval", _path(data, "data"), "--json"]
    if labels is not None:
        arguments += ["--labels", _path(labels, "labels")]
    if renormalize:
        arguments.append("--renormalize")
    if logits:
        arguments.append("--logits")
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
    if quiet:
        result = _run(arguments)
    else:
        result = subprocess.run([executable(), *arguments], text=True, stdout=subprocess.PIPE)
        if result.returncode == 2:
            raise ValueError("calbench eval: bad input (exit 2; the message is above)")
    if result.returncode != 0:
        raise RuntimeError(f"calbench eval exited {result.returncode}: "
                           f"{(result.stderr or '').strip()}")
    return json.loads(result.stdout)


def plan(plan: Any, out=None, *, threads: int | None = None, quiet: bool = True) -> dict:
    """Plans the labelled sample an audit needs: `calbench plan PLAN` (docs/plan.md).

    `plan` is a plan file's path or its content as a dict; a dict's relative paths (a
    "generator" written by `fit(..., out=...)`) are read from the current directory. With `out`
    the result is also written there, as `calbench plan --out`. Returns the result (JSON:
    "answer" holds n and its interval). quiet=False shows the progress lines on stderr."""
    written = None
    if isinstance(plan, dict):
        # In the current directory, because the command reads relative paths from the
        # plan's folder.
        handle, written = tempfile.mkstemp(prefix=".calbench-plan-", suffix=".json", dir=".")
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            json.dump(plan, f)
        source = written
    else:
        source = _path(plan, "plan")
    directory = tempfile.mkdtemp(prefix="calbench-plan-")
    try:
        target = os.path.join(directory, "plan.json")
        arguments = ["plan", source, "--out", target]
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
                message = message.replace(written, "calbench.plan(plan)")
            raise ValueError(message.removeprefix("error: "))
        if result.returncode != 0:
            raise RuntimeError(f"calbench plan exited {result.returncode}: "
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
