#!/usr/bin/env python3
"""The layers of the source tree, checked over its include graph (ctest: `layers`).

A file may include a header of its own folder or of a folder in a lower layer, never one of a
higher layer or of a sibling folder in the same layer. Folders are lib/<folder> (spelled
"<folder>/x.hpp" in an include), scenarios/, runners/ and python/src/; tests/ sit above all
and are not checked. CMake enforces the outer edge (calbench_lib's public include paths are
lib/ and the generated headers only, so lib/ cannot name scenarios/ or runners/); this script
enforces the order inside lib/ and states it once: docs/architecture.md shows LAYERS exactly
as `check_layers.py --diagram` prints them, and this test fails when the two differ.

An include in angle brackets is read too when it names a project header (`<report/x.hpp>`
with lib/report/x.hpp present): the compiler finds it on the same include path, so it is the
same link. Other angle-bracket includes (<vector>, <nlohmann/json.hpp>) are not the tree's.

Usage: check_layers.py SOURCE_DIR             exit 1 listing every upward or sideways include
       check_layers.py SOURCE_DIR --diagram    print the layer diagram docs/architecture.md holds
       check_layers.py SOURCE_DIR --self-test  plant bad includes in a scratch tree: each must
                                               be reported, a system header must not
"""
import pathlib
import re
import sys
import tempfile

# Lowest first. Each row: the folders of one layer and what they are.
LAYERS = [
    (["core"], "values, samples, RNG streams, the execution kernel, errors"),
    (["leaderboard"], "win rates, Bradley-Terry Elo and rank agreement of methods over cases"),
    (["config", "data"], "JSON readers and the generic registry mechanism; NPY and model outputs"),
    (["generators", "estimators"], "the fake classifiers; the calibration metrics"),
    (["recalibrators"], "post-hoc calibration methods (they bin with estimators/binning)"),
    (["truth"], "ground truth: closed forms, quadrature, Monte Carlo, target solving"),
    (["fit", "decisions"], "fitting families to model outputs; decision tasks and values"),
    (["experiment", "report"], "the typed experiment and its pre-flight; records -> files"),
    (["plan"], "sample-size planning"),
    (["scenarios"], "the scenario table and one module per scenario"),
    (["runners", "python"], "the command line; the Python module"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)', re.M)


def rank_of():
    return {folder: rank for rank, (folders, _) in enumerate(LAYERS) for folder in folders}


def folder_of(source_dir, path):
    """The layer folder of a source file, or None for files outside the layered tree."""
    parts = path.relative_to(source_dir).parts
    if parts[0] == "lib" and len(parts) > 2:
        return parts[1]
    if parts[0] in ("scenarios", "runners"):
        return parts[0]
    if parts[:2] == ("python", "src"):
        return "python"
    return None


def sources(source_dir):
    for top in ("lib", "scenarios", "runners", "python/src"):
        for path in sorted((source_dir / top).rglob("*")):
            if path.suffix in (".hpp", ".cpp", ".h", ".in") and path.is_file():
                yield path


def project_header(source_dir, target):
    """Whether an include names a header of the tree (lib/ and the source root are the
    include paths)."""
    return (source_dir / "lib" / target).is_file() or (source_dir / target).is_file()


def violations(source_dir):
    ranks = rank_of()
    out = []
    for path in sources(source_dir):
        folder = folder_of(source_dir, path)
        if folder is None:
            continue
        where = path.relative_to(source_dir)
        if folder not in ranks:
            out.append(f"{where}: folder {folder} has no layer in tests/lint/check_layers.py")
            continue
        text = path.read_text(encoding="utf-8")
        for match in INCLUDE.finditer(text):
            target = match.group(1) or match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            if "/" not in target:
                continue  # a header beside the file (runners/, python/src/), or <vector>
            to = target.split("/")[0]
            if match.group(2) and not project_header(source_dir, target):
                continue  # a library's header: <nlohmann/json.hpp>, <tbb/task_arena.h>
            if to == folder:
                continue
            if to not in ranks:
                out.append(f'{where}:{line}: includes "{target}": {to}/ is not a layer')
            elif ranks[to] > ranks[folder]:
                out.append(f'{where}:{line}: includes "{target}": {to} is above {folder}')
            elif ranks[to] == ranks[folder]:
                out.append(f'{where}:{line}: includes "{target}": {to} and {folder} are '
                           "siblings in one layer")
    return out


def diagram():
    width = max(len(", ".join(folders)) for folders, _ in LAYERS)
    lines = []
    for folders, what in reversed(LAYERS):
        lines.append(f"{', '.join(folders):<{width}}  {what}")
    return "\n".join(lines) + "\n"


def self_test():
    """The check must fail on each planted include, up or sideways, quoted or in angle
    brackets, and pass over a library's header and a lower layer's header."""
    headers = ("lib/report/reporter.hpp", "lib/core/value.hpp", "lib/generators/dirichlet.hpp",
               "scenarios/registry.hpp")
    cases = [  # the include, the file holding it, what the report must say (None: nothing)
        ('#include "report/reporter.hpp"', "lib/core/a.hpp", "report is above core"),
        ("#include <report/reporter.hpp>", "lib/core/a.hpp", "report is above core"),
        ("#include <scenarios/registry.hpp>", "lib/core/a.hpp", "scenarios is above core"),
        ("#include <generators/dirichlet.hpp>", "lib/estimators/a.hpp", "siblings in one layer"),
        ("#include <nlohmann/json.hpp>\n#include <vector>", "lib/core/a.hpp", None),
        ("#include <core/value.hpp>", "lib/report/a.hpp", None),
    ]
    failures = []
    for include, path, expected in cases:
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            for file, text in [(h, "#pragma once\n") for h in headers] + [(path, include + "\n")]:
                (root / file).parent.mkdir(parents=True, exist_ok=True)
                (root / file).write_text(text)
            found = violations(root)
        if expected is None and found:
            failures.append(f"{path} with {include!r}: reported {found}")
        if expected is not None and not any(expected in v for v in found):
            failures.append(f"{path} with {include!r}: not reported ({found})")
    for failure in failures:
        print("self-test:", failure)
    if not failures:
        print(f"layers self-test: {len(cases)} planted includes judged as expected")
    return 1 if failures else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    source_dir = pathlib.Path(argv[1]).resolve()
    if argv[2:] == ["--diagram"]:
        sys.stdout.write(diagram())
        return 0
    if argv[2:] == ["--self-test"]:
        return self_test()
    problems = violations(source_dir)
    doc = (source_dir / "docs" / "architecture.md").read_text(encoding="utf-8")
    if diagram() not in doc:
        problems.append("docs/architecture.md: does not show the layers as "
                        "`tests/lint/check_layers.py . --diagram` prints them:\n" + diagram())
    for problem in problems:
        print(problem)
    if not problems:
        print(f"layers: {sum(1 for _ in sources(source_dir))} files, no include goes up")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
