"""calbench.Recalibrator: a registry recalibration method fitted on your own model's outputs,
in the style of a scikit-learn estimator (docs/recalibration.md, "Recalibrating your own model").

The fit is the C++ registry method's own, the one `calbench recalibrate fit` and the
recalibration scenario call, and a saved model is the file `calbench recalibrate fit` writes:
one file works from either side.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._atomic import write_atomically
from .core import _extension, _json_text, _labels, _read_text

try:  # scikit-learn's own class when it is installed, so `except NotFittedError` catches both
    from sklearn.exceptions import NotFittedError as _SklearnNotFitted
except ImportError:  # pragma: no cover - scikit-learn is optional
    class _SklearnNotFitted(ValueError, AttributeError):
        pass


class NotFittedError(_SklearnNotFitted):
    """predict_proba, save or a fitted attribute used before fit (or load)."""


def _probabilities(p, argument: str) -> np.ndarray:
    p = np.asarray(p)
    if not np.issubdtype(p.dtype, np.floating):
        raise ValueError(f"{argument}: expected a float array (n, K), found dtype {p.dtype}")
    return np.ascontiguousarray(p, dtype=np.float64)


class Recalibrator:
    """A recalibration method of the registry (`calbench list recalibrators`).

    method: a registry name ("temperature") or a method object as in a config's `methods`
    ({"name": "histogram_binning", "bins": 10}). renormalize: rows of probabilities rounded to
    a few decimals are divided by their sum (as `--renormalize`); otherwise each row must sum
    to 1 within 1e-6.

    >>> r = Recalibrator({"name": "temperature"}).fit(p_fit, y_fit)
    >>> q = r.predict_proba(p_new)          # (n, K) calibrated probabilities
    >>> r.parameters_                       # {"temperature": 1.43}
    >>> r.save("model.json"); Recalibrator.load("model.json").predict_proba(p_new)
    """

    def __init__(self, method: Any = "temperature", *, renormalize: bool = False):
        self.method = method
        self.renormalize = renormalize

    # ---- scikit-learn's estimator protocol ----------------------------------------------------
    def get_params(self, deep: bool = True) -> dict:
        return {"method": self.method, "renormalize": self.renormalize}

    def set_params(self, **params) -> "Recalibrator":
        for key, value in params.items():
            if key not in ("method", "renormalize"):
                raise ValueError(f"Recalibrator.set_params: unknown parameter {key!r}; valid: "
                                 "method, renormalize")
            setattr(self, key, value)
        self.__dict__.pop("_model", None)  # a new method needs a new fit
        return self

    def __repr__(self) -> str:
        extra = ", renormalize=True" if self.renormalize else ""
        return f"Recalibrator({self.method!r}{extra})"

    def _method_object(self) -> dict:
        if isinstance(self.method, str):
            return {"name": self.method}
        if isinstance(self.method, dict):
            return self.method
        raise ValueError(f"Recalibrator: method = {self.method!r}: expected a registry name or "
                         "a method object {\"name\": ..., ...}")

    def fit(self, p, y) -> "Recalibrator":
        """Fits the method on probabilities p (n, K) and labels y (n,); returns self."""
        core = _extension()
        self._model = core.FittedModel.fit(_json_text(self._method_object(), "method"),
                                           _probabilities(p, "p"), _labels(y),
                                           bool(self.renormalize))
        return self

    def _fitted(self):
        model = self.__dict__.get("_model")
        if model is None:
            raise NotFittedError(
                "This Recalibrator is not fitted yet: call fit(p, y) (or Recalibrator.load) "
                "before predict_proba, save or the fitted attributes")
        return model

    def predict_proba(self, p) -> np.ndarray:
        """The calibrated probabilities q = g(p), (n, K), of probabilities p (n, K)."""
        return self._fitted().apply(_probabilities(p, "p"), bool(self.renormalize))

    transform = predict_proba

    # ---- fitted attributes -------------------------------------------------------------------
    @property
    def n_classes_(self) -> int:
        return int(self._fitted().classes)

    @property
    def label_(self) -> str:
        return self._fitted().label

    @property
    def parameters_(self) -> dict:
        """The fitted scalar values (the temperature, mean slopes, ...), as results report them."""
        return dict(self._fitted().parameters())

    # ---- the model file (`calbench recalibrate fit --out`) -----------------------------------
    def to_json(self) -> str:
        return self._fitted().to_json()

    def save(self, path: str | os.PathLike) -> None:
        """Writes the fitted model (the file `calbench recalibrate apply` reads), atomically."""
        write_atomically(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike, *, renormalize: bool = False) -> "Recalibrator":
        """A fitted Recalibrator from a model file (written by save or `calbench recalibrate
        fit`); the file is validated, every problem a ValueError naming its JSON pointer."""
        import json

        core = _extension()
        source = os.fspath(path)
        text = _read_text(source)
        model = core.FittedModel.from_json(text, source)
        out = cls(json.loads(text)["method"], renormalize=renormalize)
        out._model = model
        return out
