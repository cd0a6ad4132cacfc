"""Loading a calbench result directory (docs/python.md; the files are DESIGN.md section 4)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

# Result-file schema versions this package reads. A new version must be added here only after
# the loader has been checked against it: a silent misreading is worse than an error.
KNOWN_SCHEMA_VERSIONS = frozenset({1})

SCENARIOS = ("estimator_bias", "recalibration", "decision")


class ResultsError(ValueError):
    """A result directory that cannot be read; the message names the file and the rule."""


@dataclass
class Results:
    """One run's results as pandas DataFrames (docs/python.md lists every column)."""

    path: str
    scenario: str
    meta: dict[str, Any]
    config: dict[str, Any] = field(repr=False)
    raw: dict[str, Any] = field(repr=False)  # summary.json as parsed
    cells: pd.DataFrame = field(repr=False)
    summary: pd.DataFrame = field(repr=False)
    truth: pd.DataFrame = field(repr=False)
    replicates: pd.DataFrame | None = field(default=None, repr=False)
    requirements: pd.DataFrame | None = field(default=None, repr=False)
    rankings: pd.DataFrame | None = field(default=None, repr=False)
    reliability: pd.DataFrame | None = field(default=None, repr=False)  # reliability.csv
    # recalibration: leaderboard.csv, leaderboard_agreement.csv and leaderboard_contrast.csv
    # (docs/recalibration.md)
    leaderboard: pd.DataFrame | None = field(default=None, repr=False)
    leaderboard_agreement: pd.DataFrame | None = field(default=None, repr=False)
    leaderboard_contrast: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def sweep_keys(self) -> list[str]:
        return list(self.raw.get("sweep_keys", []))


def _check_meta(meta: dict[str, Any], where: str) -> None:
    if "schema_version" not in meta:
        raise ResultsError(f"{where}: meta has no schema_version")
    try:
        version = int(meta["schema_version"])
    except (TypeError, ValueError):
        raise ResultsError(
            f"{where}: schema_version = {meta['schema_version']!r} is not an integer") from None
    if version not in KNOWN_SCHEMA_VERSIONS:
        known = ", ".join(str(v) for v in sorted(KNOWN_SCHEMA_VERSIONS))
        raise ResultsError(
            f"{where}: schema_version {version} is not one this calbench package reads "
            f"(known: {known}); update python/calbench")


def _meta_value(text: str) -> Any:
    # Integers (schema_version, seed) as int, everything else (a git revision of digits with a
    # leading zero included) as its text, so str(value) gives back what was written.
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        return int(text)
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


def read_csv(path: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Reads a calbench CSV file: (DataFrame, meta). Files start with their header line and
    meta is {}; in files written before the tidy CSVs, leading `# key: value` lines are the meta.

    Only the comment lines before the header are meta; `comment="#"` also drops any later ones.
    """
    meta: dict[str, Any] = {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(":")
        if sep:
            meta[key.strip()] = _meta_value(value.strip())
    if meta:
        _check_meta(meta, path)
    _check_complete(text, path)
    # keep_default_na=False + na_values=[""]: only empty fields are missing ("NA" is no label
    # calbench writes, but a method called "nan" must stay a string).
    # round_trip: the shortest round-trip text calbench writes gives back the exact double.
    frame = pd.read_csv(io.StringIO(text), comment="#", keep_default_na=False, na_values=[""],
                        float_precision="round_trip")
    return frame, meta


def _check_complete(text: str, path: str) -> None:
    """A file cut short (a copy interrupted, a full disk) is an error, never a frame with a
    truncated last number and NaNs: calbench ends every line with a line break and gives every
    row as many fields as the header."""
    if text and not text.endswith("\n"):
        raise ResultsError(f"{path}: truncated (the last line has no line break)")
    rows = csv.reader(line for line in text.split("\n") if line and not line.startswith("#"))
    header = next(rows, None)
    if header is None:
        raise ResultsError(f"{path}: no header line")
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise ResultsError(f"{path}: data row {number - 1} has {len(row)} fields, the header "
                               f"{len(header)}: the file is damaged or truncated")


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise ResultsError(f"{path}: missing (is this a calbench result directory?)") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not valid JSON: {e}") from None


def _swept(cell: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """The cell's swept values; an object or array (a swept `generator`, say) as the compact JSON
    text cells.csv holds, so that every column is hashable and matches the CSV files."""
    out = {}
    for k in keys:
        v = cell.get("parameters", {}).get(k)
        out[k] = json.dumps(v, separators=(",", ":")) if isinstance(v, (dict, list)) else v
    return out


def _truth_frame(raw: dict[str, Any], keys: list[str]) -> pd.DataFrame:
    rows = []
    for cell in raw["cells"]:
        params = _swept(cell, keys)
        for quantity, t in cell.get("truth", {}).items():
            rows.append({"cell": cell["index"], **params, "quantity": quantity,
                         "value": t.get("value"), "method": t.get("method"),
                         "error": t.get("error")})
    return pd.DataFrame(rows)


def _cell_columns(cell: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    out = {"cell": cell["index"]}
    out.update(_swept(cell, keys))
    for k in ("sample_size", "fit_size", "test_size", "replicates"):
        if k in cell:
            out[k] = cell[k]
    return out


def _estimator_bias_summary(raw: dict[str, Any], keys: list[str]) -> pd.DataFrame:
    rows = []
    for cell in raw["cells"]:
        base = _cell_columns(cell, keys)
        for label, e in cell["estimators"].items():
            row = dict(base, estimator=label, name=e.get("name"), target=e.get("target"))
            for k, v in e.items():
                if k in ("name", "params", "population", "target"):
                    continue
                row[k] = v
            population = e.get("population")
            if isinstance(population, dict):
                row["population"] = population.get("value")
                row["population_error"] = population.get("error")
            row["params"] = e.get("params")
            rows.append(row)
    return pd.DataFrame(rows)


def _recalibration_summary(raw: dict[str, Any], keys: list[str]) -> pd.DataFrame:
    rows = []
    for cell in raw["cells"]:
        base = _cell_columns(cell, keys)
        for label, m in cell["methods"].items():
            common = dict(base, method=label, name=m.get("name"), fits=m.get("fits"),
                          failed_fits=m.get("failed_fits"))
            if m.get("failed_fits"):
                # As cells.csv: a method whose fits failed has a row of kind "failure" whose
                # quantity is the first failure's message (issue #38, N5).
                rows.append(dict(common, kind="failure", quantity=m.get("failure")))
            for q, t in (m.get("truth") or {}).items():
                rows.append(dict(common, kind="truth", quantity=q, target=None, mean=t["mean"],
                                 sd=t["sd"], truth_error=t.get("error"),
                                 improvement=t.get("improvement")))
            for q, e in (m.get("estimates") or {}).items():
                rows.append(dict(common, kind="estimate", quantity=q, target=e.get("target"),
                                 mean=e["mean"], sd=e["sd"], improvement=e.get("improvement"),
                                 rank_disagreement=e.get("rank_disagreement")))
            for q, v in (m.get("parameters") or {}).items():
                rows.append(dict(common, kind="parameter", quantity=q, mean=v))
            # With a decision task (docs/recalibration.md §4b), as cells.csv: the true regret (a
            # truth), then the test set's realised utility (an estimate without a target).
            decision = m.get("decision") or {}
            regret, utility = decision.get("decision_regret"), decision.get("realised_utility")
            if regret is not None:
                rows.append(dict(common, kind="truth", quantity="decision_regret", target=None,
                                 mean=regret["mean"], sd=regret["sd"],
                                 truth_error=regret.get("error"),
                                 improvement=regret.get("improvement")))
            if utility is not None:
                rows.append(dict(common, kind="estimate", quantity="realised_utility",
                                 target=None, mean=utility["mean"], sd=utility["sd"],
                                 improvement=utility.get("improvement")))
    return pd.DataFrame(rows)


def _recalibration_rankings(raw: dict[str, Any], keys: list[str]) -> pd.DataFrame:
    rows = []
    for cell in raw["cells"]:
        base = _cell_columns(cell, keys)
        for label, r in (cell.get("rankings") or {}).items():
            rows.append(dict(base, estimator=label, **r))
    return pd.DataFrame(rows)


def _flatten(value: dict[str, Any], prefix: str, out: dict[str, Any]) -> None:
    for k, v in value.items():
        if isinstance(v, dict):
            _flatten(v, f"{prefix}{k}.", out)
        else:
            out[f"{prefix}{k}"] = v


def _decision_summary(raw: dict[str, Any], keys: list[str]) -> pd.DataFrame:
    rows = []
    for cell in raw["cells"]:
        row = _cell_columns(cell, keys)
        truth = cell.get("truth", {})
        for q in ("accuracy", "ece_top_l1", "overconfidence"):
            if q in truth:
                row[q] = truth[q]["value"]
        decision = dict(cell["decision"])
        decision.pop("figures", None)  # the same values are at the top level of the block
        flat: dict[str, Any] = {}
        _flatten(decision, "", flat)
        row.update(flat)
        rows.append(row)
    return pd.DataFrame(rows)


def _exact_number(value: Any) -> float:
    """A field as the double its text names (Python's float() rounds correctly; pandas'
    to_numeric on a text column, one holding "nan" say, does not), NaN if it names none."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _check_cells_against_summary(cells: pd.DataFrame, summary: pd.DataFrame, where: str) -> None:
    """cells.csv is summary.json's cells as a table, row for row (estimator_bias: one row per
    cell and estimator; recalibration: per cell, method and quantity; decision: per cell): a file
    cut at a line boundary, or a value changed (a nan), is an error, not silently other results
    (issue #38, D11). Every numeric column of both is compared where summary.json has the value
    (it has no sd of a fitted parameter, for one)."""
    if len(cells) != len(summary):
        raise ResultsError(f"{where}: {len(cells)} rows, but summary.json has {len(summary)}: "
                           "the file is cut or was edited")
    for column in cells.columns:
        if column not in summary:
            continue
        b = pd.to_numeric(summary[column], errors="coerce").to_numpy(dtype=float)
        known = ~np.isnan(b)
        if not known.any():
            continue  # a text column (method, quantity) or one summary.json does not hold
        a = np.array([_exact_number(v) for v in cells[column]], dtype=float)
        differ = known & (a != b)
        if differ.any():
            i = int(np.flatnonzero(differ)[0])
            raise ResultsError(f"{where}: row {i + 1}: {column} = {a[i]!r}, but summary.json has "
                               f"{b[i]!r}: the file was edited or damaged")


def load(path: str | os.PathLike[str]) -> Results:
    """Loads the result directory written by `calbench run CONFIG --out PATH`.

    Raises ResultsError (a ValueError) naming the file when a file is missing, malformed, of an
    unknown scenario or of a schema version this package does not know.
    """
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise ResultsError(f"{path}: not a directory")
    summary_path = os.path.join(path, "summary.json")
    raw = _read_json(summary_path)
    meta = dict(raw.get("meta") or {})
    _check_meta(meta, summary_path)
    scenario = meta.get("scenario")
    if scenario not in SCENARIOS:
        raise ResultsError(f"{summary_path}: /meta/scenario = {scenario!r} is not one of "
                           f"{', '.join(SCENARIOS)}")
    config = _read_json(os.path.join(path, "config.resolved.json"))
    keys = list(raw.get("sweep_keys", []))

    def read(name: str, required: bool) -> pd.DataFrame | None:
        p = os.path.join(path, name)
        if not os.path.exists(p):
            if required:
                raise ResultsError(f"{p}: missing")
            return None
        frame, file_meta = read_csv(p)
        # CSV meta, when a file carries it, must describe the same run as summary.json.
        for k, v in file_meta.items():
            if k in meta and str(meta[k]) != str(v):
                raise ResultsError(f"{p}: meta {k} = {v!r} but summary.json has {meta[k]!r}")
        return frame

    rankings = None
    if scenario == "estimator_bias":
        summary = _estimator_bias_summary(raw, keys)
    elif scenario == "recalibration":
        summary = _recalibration_summary(raw, keys)
        rankings = _recalibration_rankings(raw, keys)
    else:
        summary = _decision_summary(raw, keys)

    cells = read("cells.csv", True)
    _check_cells_against_summary(cells, summary, os.path.join(path, "cells.csv"))

    reliability = read("reliability.csv", False)
    if reliability is not None and reliability["curve"].dtype == bool:
        # Only true curves (a recalibration run): pandas reads the column as booleans.
        reliability["curve"] = reliability["curve"].map({True: "true", False: "false"})
    return Results(path=path, scenario=scenario, meta=meta, config=config, raw=raw,
                   cells=cells, summary=summary,
                   truth=_truth_frame(raw, keys), replicates=read("replicates.csv", False),
                   requirements=read("requirements.csv", False), rankings=rankings,
                   reliability=reliability, leaderboard=read("leaderboard.csv", False),
                   leaderboard_agreement=read("leaderboard_agreement.csv", False),
                   leaderboard_contrast=read("leaderboard_contrast.csv", False))
