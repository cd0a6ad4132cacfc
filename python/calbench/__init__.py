"""calbench: the library's verbs, result directories as DataFrames, figures (docs/python.md).

The names at this level are the package's public interface. `sample`, `truth`, `estimate` and
`run` call the compiled extension `calbench._core`; everything else is pure Python and works
without it (those four raise ImportError saying how to build it). `fit`, `evaluate`, `plan` and
`gate` run the `calbench` program (calbench.commands).
"""

import os as _os

# A build other than the release preset's keeps the extension in its binary directory; ctest
# names it here so that each build tests its own module.
if _os.environ.get("CALBENCH_CORE_DIR"):
    __path__.insert(0, _os.environ["CALBENCH_CORE_DIR"])

from .results import KNOWN_SCHEMA_VERSIONS, Results, ResultsError, load, read_csv
from .reliability import (class_reliability_curves, classwise_reliability, recalibrated_curves,
                          reliability_curves, reliability_diagram, reliability_table)
from .core import (TruthValue, conventions, estimate, estimator_examples, run, sample,
                   truth)
from .recalibrator import NotFittedError, Recalibrator
from .commands import FitRefused, evaluate, fit, gate, gate_curve, plan
from .leaderboard import leaderboard, rank_agreement, rank_contrast, read_calarena
from .figures import (bias_curves, bias_split, cost_vs_ece, error_curves,
                      estimate_distribution, leaderboard_figure, measured_vs_true,
                      method_comparison, oc_curve, rank_agreement_figure,
                      ranking_disagreement, recalibration_error, utility_map)

__all__ = [
    "sample", "truth", "TruthValue", "estimate", "estimator_examples", "conventions", "run",
    "Recalibrator", "NotFittedError", "fit", "plan", "evaluate", "gate", "gate_curve",
    "FitRefused",
    "leaderboard", "rank_agreement", "rank_contrast", "read_calarena",
    "KNOWN_SCHEMA_VERSIONS", "Results", "ResultsError", "load", "read_csv",
    "reliability_table", "reliability_diagram", "classwise_reliability", "reliability_curves",
    "class_reliability_curves", "recalibrated_curves",
    "bias_curves", "error_curves", "estimate_distribution", "bias_split",
    "recalibration_error", "method_comparison", "measured_vs_true", "ranking_disagreement",
    "utility_map", "cost_vs_ece", "leaderboard_figure", "rank_agreement_figure", "oc_curve",
]
