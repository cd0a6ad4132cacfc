#!/usr/bin/env bash
# Rewrites the golden files of tests/golden/ from the current build (docs/testing.md): builds the
# release preset, runs every shipped config's small version (configs/NAME.json merged with
# tests/golden/NAME.patch.json) and shows what changed. Review `git diff tests/golden` and commit
# the goldens with the change that explains them.
# Usage: scripts/update-golden.sh [NAME...]   (default: every config in configs/)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target calbench_golden
if [ $# -eq 0 ]; then set -- --all; fi
build/release/calbench_golden --update "$@"
git status --short -- tests/golden
