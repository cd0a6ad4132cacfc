"""calbench: load result directories and draw their figures (docs/python.md).

The names at this level are the package's public interface. `sample`, `truth`, `estimate`,
`fit`, `apply` and `run` are kept free for the compiled extension `calbench._core` (issue 13),
which will expose the library's verbs here.
"""

from .results import KNOWN_SCHEMA_VERSIONS, Results, ResultsError, load, read_csv
from .reliability import (class_reliability_curves, classwise_reliability, reliability_curves,
                          reliability_diagram, reliability_table)
from .figures import (bias_curves, bias_split, cost_vs_ece, error_curves,
                      estimate_distribution, measured_vs_true, ranking_disagreement,
                      recalibration_error, utility_map)

__all__ = [
    "KNOWN_SCHEMA_VERSIONS", "Results", "ResultsError", "load", "read_csv",
    "reliability_table", "reliability_diagram", "classwise_reliability", "reliability_curves",
    "class_reliability_curves",
    "bias_curves", "error_curves", "estimate_distribution", "bias_split",
    "recalibration_error", "measured_vs_true", "ranking_disagreement",
    "utility_map", "cost_vs_ece",
]
