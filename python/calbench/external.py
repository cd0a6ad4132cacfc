"""Any Python metric fn(p, y) -> float as a calbench external estimator (docs/external.md).

    python3 -m calbench.external [--path DIR]... MODULE:FUNCTION DATA_DIR

calbench appends DATA_DIR (a cell's replicates and manifest.json); this prints fn(p, y) for each
replicate in the manifest's order. --path puts a directory first on sys.path before the module
is imported (for a module that is not installed). In a config:

    {"name": "external", "label": "my_ece", "target": "ece_top_l1",
     "command": ["python3", "-m", "calbench.external", "--path", "tests", "my_metrics:my_ece"]}
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

import numpy as np


def values(fn, directory: str) -> list[float]:
    """fn on every replicate of a protocol directory, in the manifest's order."""
    with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    out = []
    for p_file, y_file in manifest["files"]:
        p = np.load(os.path.join(directory, p_file))
        y = np.load(os.path.join(directory, y_file))
        out.append(float(fn(p, y)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m calbench.external",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", action="append", default=[],
                        help="a directory to import the module from (repeatable)")
    parser.add_argument("function", help="MODULE:FUNCTION, a metric fn(p, y) -> float")
    parser.add_argument("directory", help="the directory calbench wrote")
    args = parser.parse_args(argv)
    module_name, sep, function_name = args.function.partition(":")
    if not sep or not module_name or not function_name:
        parser.error(f"{args.function!r}: expected MODULE:FUNCTION")
    for path in reversed(args.path):
        sys.path.insert(0, os.path.abspath(path))
    fn = getattr(importlib.import_module(module_name), function_name)
    print("\n".join(repr(v) for v in values(fn, args.directory)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
