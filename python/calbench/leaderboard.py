"""Leaderboards of methods over cases (docs/python.md, "Leaderboards").

`leaderboard(frame, key=...)` ranks methods CalArena's way: per case, each method's win rate is
the share of the OTHER methods strictly worse (ties count for neither), averaged over cases; its
Bradley–Terry Elo is fitted to every case's pairwise results (a tie half a win each); both carry
95 % percentile bootstrap intervals over blocks of cases. `rank_agreement` gives Kendall's tau-b
between two keys' leaderboards, its mean over cases, and the share of cases whose best method by
one key is the best by the other. The numbers come from calbench's C++ library
(leaderboard/leaderboard.hpp), the code that writes a recalibration run's leaderboard.csv.

Two layouts are read:
- long: one row per (case, method), the method in column `method`, the case named by the
  column(s) `case`, one column per key;
- CalArena's (probkit/CalArena, results/<benchmark>/<Method>.csv): one row per experiment,
  the columns dataset, model, cal_size, test_size (and n_classes for multiclass), then
  `<Method>_<metric>` per metric. Give the merged frame, a directory of per-method files, or a
  list of their paths; the files are joined on the experiment columns as CalArena's
  load_benchmark_results joins them (inner join), and the bootstrap blocks are the datasets, as
  in its compute_winrates(bootstrap_datasets=True).
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

CALARENA_EXPERIMENT = ("dataset", "model", "cal_size", "test_size", "n_classes")

# The bootstrap's limit, a config's intervals.resamples' (scenarios/estimator_bias/config.cpp).
MAX_RESAMPLES = 1_000_000

# Keys where a higher value is better unless the caller says otherwise.
HIGHER_IS_BETTER = frozenset({"accuracy"})

_BOARD_COLUMNS = ["key", "better", "method", "mean", "win_rate", "win_rate_lower",
                  "win_rate_upper", "elo", "elo_lower", "elo_upper", "rank", "failed", "cases",
                  "blocks"]
_AGREEMENT_COLUMNS = ["key", "reference", "tau_b", "tau_b_lower", "tau_b_upper", "case_tau_b",
                      "case_tau_b_lower", "case_tau_b_upper", "tau_cases", "winner_agreement",
                      "winner_agreement_lower", "winner_agreement_upper", "cases", "blocks"]
_CONTRAST_COLUMNS = ["key", "other", "reference", "tau_b_difference", "tau_b_difference_lower",
                     "tau_b_difference_upper", "case_tau_b_difference",
                     "case_tau_b_difference_lower", "case_tau_b_difference_upper",
                     "winner_agreement_difference", "winner_agreement_difference_lower",
                     "winner_agreement_difference_upper", "cases", "blocks"]


def read_calarena(source: str | os.PathLike | Sequence[str | os.PathLike]) -> pd.DataFrame:
    """CalArena's per-method result files joined into one frame, one row per experiment.

    `source` is a directory (every *.csv in it, in name order) or a list of files.
    """
    if isinstance(source, (str, os.PathLike)):
        directory = os.fspath(source)
        if not os.path.isdir(directory):
            raise ValueError(f"calbench.read_calarena: {directory}: not a directory")
        paths = [os.path.join(directory, f) for f in sorted(os.listdir(directory))
                 if f.endswith(".csv")]
        if not paths:
            raise ValueError(f"calbench.read_calarena: {directory}: no .csv files")
    else:
        paths = [os.fspath(p) for p in source]
    merged = None
    for path in paths:
        frame = pd.read_csv(path)
        on = [c for c in CALARENA_EXPERIMENT if c in frame.columns]
        if "dataset" not in on:
            raise ValueError(f"calbench.read_calarena: {path}: no `dataset` column; expected "
                             "CalArena's layout (dataset, model, cal_size, test_size, "
                             "<Method>_<metric>...)")
        merged = frame if merged is None else merged.merge(frame, on=on)
    return merged


def _is_calarena(frame: pd.DataFrame, method: str) -> bool:
    return method not in frame.columns and "dataset" in frame.columns


def _calarena_methods(frame: pd.DataFrame, key: str) -> list[str]:
    suffix = "_" + key
    return [c[:-len(suffix)] for c in frame.columns if c.endswith(suffix)]


def _calarena_keys(frame: pd.DataFrame) -> list[str]:
    keys = []
    for column in frame.columns:
        if column in CALARENA_EXPERIMENT or "_" not in column:
            continue
        key = column.rsplit("_", 1)[1]
        if key not in keys:
            keys.append(key)
    return keys


def _tables(frame, keys, method, case, block, missing):
    """(methods, blocks per case, {key: values (cases, methods)}) from either layout."""
    if isinstance(frame, (str, os.PathLike, list, tuple)):
        frame = read_calarena(frame)
    if not isinstance(frame, pd.DataFrame):
        raise ValueError("calbench.leaderboard: frame must be a pandas DataFrame, a directory of "
                         "CalArena result files or a list of them")
    if _is_calarena(frame, method):
        if keys is None:
            keys = _calarena_keys(frame)
        methods = None
        values = {}
        for key in keys:
            found = _calarena_methods(frame, key)
            if not found:
                raise ValueError(f"calbench.leaderboard: key {key!r}: no column <Method>_{key}")
            if methods is None:
                methods = found
            elif set(found) != set(methods):
                raise ValueError(f"calbench.leaderboard: key {key!r} has the methods {found}, "
                                 f"another key {methods}")
            values[key] = frame[[f"{m}_{key}" for m in methods]].to_numpy(dtype=float)
        block_column = frame[block if block is not None else "dataset"]
        return methods, list(pd.factorize(block_column)[0]), values
    for column in [method] + ([case] if isinstance(case, str) else list(case)):
        if column not in frame.columns:
            raise ValueError(f"calbench.leaderboard: no column {column!r} (the long layout has "
                             "one row per case and method: give case= and method=)")
    case_columns = [case] if isinstance(case, str) else list(case)
    if keys is None:
        skip = set(case_columns) | {method} | ({block} if isinstance(block, str) else set())
        keys = [c for c in frame.columns
                if c not in skip and pd.api.types.is_numeric_dtype(frame[c])]
    methods = list(pd.unique(frame[method]))
    if frame.duplicated(case_columns + [method]).any():
        raise ValueError("calbench.leaderboard: a (case, method) pair appears twice")
    values = {}
    cases = None
    for key in keys:
        if key not in frame.columns:
            raise ValueError(f"calbench.leaderboard: no column {key!r}")
        wide = frame.pivot_table(index=case_columns, columns=method, values=key, sort=False,
                                 dropna=False, aggfunc="first")
        wide = wide.reindex(columns=methods)
        if missing == "error" and wide.isna().any().any():
            row, col = np.argwhere(wide.isna().to_numpy())[0]
            raise ValueError(f"calbench.leaderboard: key {key!r}: case {wide.index[row]!r} has "
                             f"no value for method {methods[col]!r}")
        cases = wide.index if cases is None else cases
        values[key] = wide.loc[cases].to_numpy(dtype=float)
    if block is None:
        blocks = list(range(len(cases)))
    else:
        first = frame.drop_duplicates(case_columns).set_index(case_columns)[block]
        blocks = list(pd.factorize(first.loc[cases])[0])
    return methods, blocks, values


def _drop_missing(blocks, values, missing):
    """(blocks, values, failed). missing="error": every case, the library names the first bad
    value; "drop": only the cases where every key has a finite value for every method (the others
    reported in a RuntimeWarning); "lose": every case, a method with a missing or non-finite value
    in any requested key failed that case and loses it on every key (the recalibration
    scenario's rule for a failed fit, docs/recalibration.md §4a)."""
    if missing not in ("error", "drop", "lose"):
        raise ValueError(f"calbench.leaderboard: missing = {missing!r}: expected 'error', 'drop' "
                         "or 'lose'")
    if missing == "error":
        return blocks, values, None
    bad = np.zeros(next(iter(values.values())).shape, dtype=bool) if values else None
    for v in values.values():
        bad |= ~np.isfinite(v)
    if missing == "lose":
        return blocks, values, bad if bad is not None and bad.any() else None
    keep = ~bad.any(axis=1) if bad is not None else np.ones(len(blocks), dtype=bool)
    if not keep.all():
        import warnings
        warnings.warn(f"calbench.leaderboard: {int((~keep).sum())} of {len(keep)} cases have a "
                      "missing or non-finite value and are left out", RuntimeWarning, stacklevel=3)
    return [b for b, k in zip(blocks, keep) if k], {k: v[keep] for k, v in values.items()}, None


def _compute(frame, keys, compare, *, higher_is_better, method, case, block, resamples,
             elo_resamples, level, seed, missing):
    from .core import _count, _extension

    # Checked here, not by the binding: a seed past 2^64 reached pybind11's "incompatible
    # function arguments", and a seed 1.5 or a level "0.95" was silently converted (issue #38).
    resamples = _count(resamples, "leaderboard: resamples", 1)
    elo_resamples = _count(elo_resamples, "leaderboard: elo_resamples", 0)
    seed = _count(seed, "leaderboard: seed", 0)
    if resamples > MAX_RESAMPLES:  # 2^63 resamples ended in std::bad_alloc
        raise ValueError(f"leaderboard: resamples = {resamples}: must be <= {MAX_RESAMPLES} "
                         "(as a config's intervals.resamples)")
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, float, np.number)) \
            or not 0 < level < 1:
        raise ValueError(f"leaderboard: level = {level!r}: expected a number in (0, 1)")
    if isinstance(keys, str):
        keys = [keys]
    methods, blocks, values = _tables(frame, keys, method, case, block, missing)
    blocks, values, failed = _drop_missing(blocks, values, missing)
    names = list(values)
    higher = set(HIGHER_IS_BETTER if higher_is_better is None else higher_is_better)
    spec = [(k, k in higher, np.ascontiguousarray(values[k])) for k in names]
    pairs = [(names.index(k), names.index(r)) for k, r in compare]
    out = _extension().leaderboard([str(m) for m in methods], [int(b) for b in blocks], spec,
                                   pairs, resamples, elo_resamples, float(level), seed,
                                   np.ascontiguousarray(
                                       failed if failed is not None
                                       else np.zeros((0, 0), dtype=bool)))
    return methods, names, higher, out


def leaderboard(frame, key: str | Iterable[str] | None = None, *,
                higher_is_better: Iterable[str] | None = None, method: str = "method",
                case: str | Sequence[str] = "case", block: str | None = None,
                resamples: int = 1000, elo_resamples: int = 100, level: float = 0.95,
                seed: int = 0, missing: str = "error") -> pd.DataFrame:
    """One row per (key, method): mean, win rate, Elo, their intervals and the rank (1 = best).

    key: one key, several, or None for every key of the frame. Lower is better except for the
    keys in `higher_is_better` (default: "accuracy"). block: the column whose values are the
    bootstrap's blocks (CalArena layout: default "dataset"; long layout: default each case).
    missing: "error" (a ValueError naming the key, case and method of a NaN), "drop" (leave
    out every case with a NaN in any requested key, with a warning) or "lose" (a method with a
    NaN in a case loses that case on every key, every other method beating it; `failed` counts
    such cases; CalArena instead lets a NaN beat no one and lose to no one in the win rate and
    tie in the Elo).
    """
    methods, names, higher, out = _compute(
        frame, key, [], higher_is_better=higher_is_better, method=method, case=case,
        block=block, resamples=resamples, elo_resamples=elo_resamples, level=level, seed=seed,
        missing=missing)
    rows = []
    for k, m, mean, wr, wr_lo, wr_hi, elo, elo_lo, elo_hi, rank, failed in out["standings"]:
        rows.append([names[k], "higher" if names[k] in higher else "lower", methods[m], mean, wr,
                     wr_lo, wr_hi, elo, elo_lo, elo_hi, rank, failed, out["cases"],
                     out["blocks"]])
    board = pd.DataFrame(rows, columns=_BOARD_COLUMNS)
    board["key"] = pd.Categorical(board["key"], categories=names, ordered=True)
    board = board.sort_values(["key", "rank", "method"], kind="stable").reset_index(drop=True)
    board["key"] = board["key"].astype(str)
    return board


def rank_agreement(frame, keys: str | Iterable[str], references: str | Iterable[str], *,
                   higher_is_better: Iterable[str] | None = None, method: str = "method",
                   case: str | Sequence[str] = "case", block: str | None = None,
                   resamples: int = 1000, level: float = 0.95, seed: int = 0,
                   missing: str = "error") -> pd.DataFrame:
    """One row per (key, reference): Kendall's tau-b between their leaderboards' win rates, its
    mean over cases, and the share of cases whose best method by `key` is best by `reference`,
    each with its bootstrap interval (the same resamples as `leaderboard`'s with this seed)."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    references = [references] if isinstance(references, str) else list(references)
    every = keys + [r for r in references if r not in keys]
    pairs = [(k, r) for k in keys for r in references]
    _, _, _, out = _compute(frame, every, pairs, higher_is_better=higher_is_better, method=method,
                            case=case, block=block, resamples=resamples, elo_resamples=0,
                            level=level, seed=seed, missing=missing)
    rows = [[every[k], every[r], *rest, out["cases"], out["blocks"]]
            for k, r, *rest in out["agreements"]]
    return pd.DataFrame(rows, columns=_AGREEMENT_COLUMNS)


def rank_contrast(frame, keys: Iterable[str], reference: str, *,
                  higher_is_better: Iterable[str] | None = None, method: str = "method",
                  case: str | Sequence[str] = "case", block: str | None = None,
                  resamples: int = 1000, level: float = 0.95, seed: int = 0,
                  missing: str = "error") -> pd.DataFrame:
    """One row per pair (key, other) of `keys`, in their order: each agreement of `key` with
    `reference` (rank_agreement's three) minus that of `other`, with a percentile interval of
    the differences over the same resamples (a paired bootstrap): "key tracks the reference
    better than other" holds when the interval excludes 0."""
    keys = list(keys)
    every = keys + ([reference] if reference not in keys else [])
    pairs = [(k, reference) for k in keys]
    _, _, _, out = _compute(frame, every, pairs, higher_is_better=higher_is_better, method=method,
                            case=case, block=block, resamples=resamples, elo_resamples=0,
                            level=level, seed=seed, missing=missing)
    rows = [[every[k], every[o], every[r], *rest, out["cases"], out["blocks"]]
            for k, o, r, *rest in out["contrasts"]]
    return pd.DataFrame(rows, columns=_CONTRAST_COLUMNS)
