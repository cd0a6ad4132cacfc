"""The library's verbs through the compiled extension calbench._core (docs/python.md).

Components are the same dicts a config holds; the C++ registry reads them with the same rules
and messages, and every problem is a ValueError naming the argument and the key (its JSON
pointer). `import calbench` works without the extension; these functions raise ImportError
saying how to build it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import warnings
from typing import Any, NamedTuple

import numpy as np

from ._progress import Progress
from .results import Results, load


def _extension():
    try:
        from . import _core
    except ImportError as e:
        raise ImportError(
            "this function needs calbench's compiled extension calbench._core, which is not "
            "built for this checkout: run scripts/setup.sh (or `cmake --preset release && "
            "cmake --build --preset release`), which writes it into python/calbench/ "
            f"({e})") from None
    return _core


def _json_value(value: Any) -> Any:
    # numpy scalars and arrays as their Python values; anything else is not a JSON value.
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{value!r} ({type(value).__name__}) is not a JSON value")


def _pointer_token(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _first_bad_value(value: Any, pointer: str = "") -> tuple[str, str] | None:
    """(JSON pointer, what is wrong) of the first value json.dumps refuses, depth first in
    the order json.dumps writes: a NaN was reported as "Out of range float values are not JSON
    compliant" without saying where (issue #28)."""
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist() if isinstance(value, np.ndarray) else value.item()
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return pointer, f"{value} is not a finite number (JSON has no NaN or infinity)"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                return pointer, f"the key {key!r} ({type(key).__name__}) is not a string"
            found = _first_bad_value(item, f"{pointer}/{_pointer_token(key)}")
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _first_bad_value(item, f"{pointer}/{i}")
            if found:
                return found
        return None
    if value is None or isinstance(value, (str, int, bool)):
        return None
    return pointer, f"{value!r} ({type(value).__name__}) is not a JSON value"


def _json_text(value: Any, argument: str) -> str:
    try:
        return json.dumps(value, allow_nan=False, default=_json_value)
    except (TypeError, ValueError) as e:
        found = _first_bad_value(value)
        if found is not None:
            pointer, what = found
            raise ValueError(f"calbench: {argument}: {pointer or '/'}: {what}") from None
        raise ValueError(f"calbench: {argument}: {e}") from None


def _count(value: Any, argument: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{argument} = {value!r}: expected an integer >= {minimum}")
    value = int(value)
    if value < minimum or value >= 2**64:
        raise ValueError(f"{argument} = {value}: expected an integer >= {minimum} and < 2^64")
    return value


# The command line's limit for a JSON file (lib/core/read_file.hpp, kMaxJsonFileBytes).
_MAX_JSON_FILE_BYTES = 64 << 20


def _read_text(source: str) -> str:
    """The whole UTF-8 text of a file the user named; a ValueError naming it if it cannot be read.
    Only a regular file of at most 64 MiB is read, as on the command line: /dev/zero was read
    to a MemoryError and a FIFO blocked (issue #38, D15)."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ValueError(f"{source}: cannot open the file ({e.strerror})") from None
    try:
        status = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        kind = ("a directory" if stat.S_ISDIR(status.st_mode) else
                "a FIFO" if stat.S_ISFIFO(status.st_mode) else
                "a character device" if stat.S_ISCHR(status.st_mode) else
                "a block device" if stat.S_ISBLK(status.st_mode) else
                "a socket" if stat.S_ISSOCK(status.st_mode) else "a special file")
        raise ValueError(f"{source}: cannot open the file (it is {kind}, not a regular file)")
    with os.fdopen(fd, "rb") as f:
        if status.st_size > _MAX_JSON_FILE_BYTES:
            raise ValueError(f"{source}: cannot read the file (it has {status.st_size} bytes, "
                             f"more than calbench's limit of {_MAX_JSON_FILE_BYTES})")
        data = f.read(_MAX_JSON_FILE_BYTES + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{source}: not UTF-8 text (byte {e.start})") from None


def _labels(y) -> np.ndarray:
    # Integer labels, or float labels that are whole numbers (numpy.loadtxt reads a CSV's label
    # column as floats): the int64 array the extension takes.
    y = np.asarray(y)
    if np.issubdtype(y.dtype, np.floating):
        bad = ~np.isfinite(y) | (y != np.floor(y))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"y: row {i}: label {y[i]!r} is not an integer class index "
                             "(a whole number 0 .. K-1)")
    elif not (np.issubdtype(y.dtype, np.integer) or y.dtype == np.bool_):
        raise ValueError(f"y: expected an integer array of labels, found dtype {y.dtype}")
    # Labels past int64's range would wrap on conversion (a uint64 2^64-1 was reported as
    # label -1, issue #28): named as they are.
    if y.dtype != np.bool_ and y.size > 0:
        limit = np.iinfo(np.int64).max
        huge = (y >= 2.0**63) | (y < -(2.0**63)) if np.issubdtype(y.dtype, np.floating) else (
            y > limit if y.dtype.kind == "u" else np.zeros(y.shape, dtype=bool))
        if huge.any():
            i = int(np.flatnonzero(huge)[0])
            value = int(y.flat[i]) if y.dtype.kind in "iu" else y.flat[i]
            raise ValueError(f"y: row {i}: label {value} is out of range (a class index "
                             "0 .. K-1)")
    return np.ascontiguousarray(y, dtype=np.int64)


def _generator_document(generator: dict, settings: dict | None, directory) -> dict:
    """{"generator": ..., "truth": ...} for the extension. A generator that names a rows file
    (the `empirical` family as `calbench fit --out` writes it) reads it relative to `directory`
    when given (a run reads it relative to the config's folder), else to the current directory."""
    if directory is not None and isinstance(generator, dict) and \
            isinstance(generator.get("rows"), str) and not os.path.isabs(generator["rows"]):
        generator = dict(generator, rows=os.path.join(os.fspath(directory), generator["rows"]))
    document = {"generator": generator}
    if settings is not None:
        document["truth"] = settings
    return document


def sample(generator: dict, n: int, seed: int, replicate: int = 0, *, cell: int = 0,
           with_c: bool = False, settings: dict | None = None, directory=None):
    """n draws of the fake classifier `generator` (a config's generator object).

    Returns (p, y): p the (n, K) reported probabilities, y the (n,) int64 labels; with
    with_c=True also c, the (n, K) true class distributions (E[1{y=k} | p] = E[c_k | p]).
    The draws are those of replicate `replicate` of cell `cell` in a run with this `seed`
    (the stream (seed, cell, replicate, sample)), so they equal what `calbench run` draws.
    A generator given by a `target` is solved first, under `settings` (a config's `truth`
    object: give the run's to get the run's solution). `directory`: the folder a relative rows
    file is read from (give the config's folder for a config `calbench fit --out` wrote;
    default the current directory).
    """
    core = _extension()
    n = _count(n, "n", 1)
    seed = _count(seed, "seed", 0)
    replicate = _count(replicate, "replicate", 0)
    cell = _count(cell, "cell", 0)
    text = _json_text(_generator_document(generator, settings, directory), "generator")
    p, y, c = core.sample(text, n, seed, cell, replicate, bool(with_c))
    return (p, y, c) if with_c else (p, y)


class TruthValue(NamedTuple):
    """A ground-truth value with its method (closed_form, quadrature, monte_carlo) and error."""

    value: float
    method: str
    error: float


def truth(generator: dict, settings: dict | None = None, *,
          stream: int = 0, directory=None) -> dict[str, TruthValue]:
    """The ground truth of `generator`: {quantity: TruthValue}, the nine design quantities.

    `settings` is a config's `truth` object ({"samples": ..., "tolerance": ...}); the values
    are those a run with the same generator and settings reports, to the last digit.
    `stream` > 0 draws the Monte Carlo parts from an independent replica of the truth streams
    (not what a run reports: for precision checks against an independent long run).
    `directory`: the folder a relative rows file is read from, as for sample().
    """
    core = _extension()
    rows = core.truth(_json_text(_generator_document(generator, settings, directory),
                                 "generator"), stream)
    return {q: TruthValue(value, method, error) for q, value, method, error in rows}


def estimate(estimator: dict, p, y, *, renormalize: bool = False) -> float:
    """The registry estimator `estimator` (a config's estimators entry) on probabilities p
    (n, K) and labels y (n,): integers, or floats that are whole numbers. Rows are checked
    like `calbench eval`'s; renormalize=True divides rows rounded to a few decimals by their
    sum, as `calbench eval --renormalize` (docs/eval.md)."""
    core = _extension()
    p = np.asarray(p)
    y = np.asarray(y)
    if not np.issubdtype(p.dtype, np.floating):
        raise ValueError(f"p: expected a float array (n, K), found dtype {p.dtype}")
    y = _labels(y)
    return core.estimate(_json_text(estimator, "estimator"),
                         np.ascontiguousarray(p, dtype=np.float64), y, bool(renormalize))


def estimator_examples() -> list[dict]:
    """Every registry estimator's documented example, as the dict a config would hold."""
    return [json.loads(text) for _name, text, _keys in _extension().estimator_rows()]


def conventions() -> list[str]:
    """The binning conventions a binned estimator's `convention` takes (docs/conventions.md)."""
    return list(_extension().conventions())


def _warn_all(messages: list[str]) -> None:
    # What the results lack (a method whose fits failed): loud, as on the command line.
    for message in messages:
        warnings.warn(f"calbench: {message}", RuntimeWarning, stacklevel=3)


def run(config, out: str | os.PathLike | None = None, threads: int | None = None,
        overwrite: bool = False, quiet: bool = False, long: bool = False) -> Results:
    """Runs an experiment (a config dict, or the path of a config file) and returns its
    Results (DataFrames, calbench.load). With `out` the result files are written there (as
    `calbench run --out`), otherwise into a temporary directory that is removed afterwards.
    A finished result set already in `out` is replaced only with overwrite=True (the command
    line's --overwrite); without it the run raises OSError and leaves it whole. A run longer
    than 2 s prints its progress on sys.stderr every 5 s (tasks done of the stage running);
    quiet=True prints none. A run whose pre-flight estimate is above a day raises ValueError
    unless long=True (the command line's --long)."""
    core = _extension()
    if isinstance(config, (str, os.PathLike)):
        source = os.fspath(config)
        text = _read_text(source)
    else:
        source, text = "calbench.run", _json_text(config, "config")
    threads = _count(threads, "threads", 1) if threads is not None else (os.cpu_count() or 1)
    for flag, value in (("quiet", quiet), ("long", long)):
        if not isinstance(value, bool):
            raise TypeError(f"{flag} must be True or False, not {value!r}")
    progress = None if quiet else Progress(f"calbench.run: {_run_name(text, source)}",
                                           "replicates")

    def execute(target: str, replace: bool) -> None:
        _warn_all(core.run(text, source, target, threads, replace, long, progress))
        if progress is not None:
            progress.finish()

    if out is not None:
        if not isinstance(overwrite, bool):
            raise TypeError(f"overwrite must be True or False, not {overwrite!r}")
        execute(os.fspath(out), overwrite)
        return load(os.fspath(out))
    # The pid in the name lets the next run remove what a killed Python left (its finally
    # does not run after SIGKILL): docs/durability.md, "Temporaries after kill -9".
    core.remove_dead_temporaries(tempfile.gettempdir())
    directory = tempfile.mkdtemp(prefix=f"calbench-run-{os.getpid()}-")
    try:
        target = os.path.join(directory, "results")
        execute(target, False)
        return load(target)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _run_name(text: str, source: str) -> str:
    # The config's name, as the command line's progress bar shows it; else its source.
    try:
        name = json.loads(text).get("name")
    except (ValueError, AttributeError):
        name = None
    return name if isinstance(name, str) and name else source
