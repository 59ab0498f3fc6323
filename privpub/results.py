"""The tidy results format, shared by what writes results (experiments/) and what reads
them (plots/): one row per (trial, metric), where a trial is one repetition of one cell under
one base seed, and the one row selector of figures, tables and claims (:func:`select_rows`).
:mod:`privpub.experiments.store` writes and reads the parquet files; the rules are in
``docs/design.md`` ("Results") and ``docs/claims.md`` ("Selectors").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from privpub.errors import ConfigError, PrivpubError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COLUMN_ORDER",
    "RELEASE_METRIC",
    "INFO_PREFIX",
    "DIAGNOSTIC_PREFIX",
    "is_mechanism_row",
    "SCALES",
    "OPT_IN_SCALES",
    "experiment_scales",
    "TRIAL_KEY",
    "VERDICTS",
    "EMPTY_POLICIES",
    "encode_vector",
    "decode_vector",
    "comparison",
    "check_condition",
    "condition_mask",
    "select_rows",
]

#: The scales an experiment runs at, smallest first: ``smoke`` (seconds, synthetic data, what
#: the tests run), ``small`` (minutes), ``paper`` (the paper's datasets and repetitions) and
#: ``large`` (graphs of today's size: ``livejournal_like``, ``orkut_like``).
SCALES = ("smoke", "small", "paper", "large")

#: Scales an experiment or task runs at only when it declares a ``scales.<scale>`` block
#: (every experiment has the other three; the paper scale is the file itself).
OPT_IN_SCALES = ("large",)


def experiment_scales(experiment: dict) -> tuple[str, ...]:
    """The scales ``experiment`` (a config mapping) runs at: every scale but the opt-in ones
    it has no ``scales.<scale>`` block for."""
    blocks = experiment.get("scales") or {}
    return tuple(s for s in SCALES if s not in OPT_IN_SCALES or s in blocks)

#: A claim's verdicts, in the order they are counted and shown.
VERDICTS = ("held", "not held", "not evaluated")

#: The columns naming one trial (one repetition of one cell under one base seed).
TRIAL_KEY = ("cell", "base_seed", "rep")

#: ``metric`` of the rows that carry a released vector (experiments with ``keep_releases``)
#: in their ``release`` column; their ``value`` is NaN. The truth of each dataset is stored
#: the same way, with ``mechanism == label == "truth"``.
RELEASE_METRIC = "release"

#: ``metric`` prefixes of the rows a mechanism reports beside its release
#: (:class:`privpub.types.Release`): ``info/<key>`` is part of the release (its privacy
#: claim covers it), ``diag/<key>`` a declared diagnostic computed from the input for the
#: report (not private; the audit does not read it).
INFO_PREFIX, DIAGNOSTIC_PREFIX = "info/", "diag/"


def is_mechanism_row(metric) -> bool:
    """Whether a ``metric`` name is an ``info/<key>`` or ``diag/<key>`` row (reported by
    the mechanism, not computed by a registered metric)."""
    return isinstance(metric, str) and metric.startswith((INFO_PREFIX, DIAGNOSTIC_PREFIX))


def encode_vector(values) -> bytes:
    """A 1-D float vector as little-endian float64 bytes (exact, compact in parquet)."""
    return np.ascontiguousarray(values, dtype="<f8").ravel().tobytes()


def decode_vector(blob: bytes) -> np.ndarray:
    """The inverse of :func:`encode_vector`."""
    return np.frombuffer(blob, dtype="<f8").copy()


#: Leading columns of a loaded frame; parameter columns follow in alphabetical order.
COLUMN_ORDER = (
    "experiment",
    "scale",
    "dataset",
    "dataset_options",
    "mechanism",
    "label",
    "role",
    "paper",
    "params",
    "rep",
    "base_seed",
    "seed",
    "metric",
    "value",
    "seconds",
    "task_seconds",
    "cpu_seconds",
    "peak_mb",
    "release_cached",
    "privacy",
    "noise_free",
    "caveat",
    "epsilon_spent",
    "ledger",
    "verified",
    "status",
    "error",
    "cell",
    "release",
    "code_hash",
    "code_version",
    "written_at",
)


# --------------------------------------------------------------------------- selecting rows

#: How a condition treats a row whose column is empty (NaN: a mechanism that does not take
#: the parameter): ``keep`` passes it (a figure's or a claim's ``where``: such a mechanism is
#: drawn as a reference line across the x axis), ``drop`` fails it (a claim's series selector).
EMPTY_POLICIES = ("keep", "drop")

_COMPARISON = re.compile(r"^\s*(>=|<=|!=|==|>|<)\s*(.+?)\s*$")
_RTOL = 1e-12  # numbers match when equal up to this relative difference (printing, YAML)


def comparison(value) -> tuple[str, str] | None:
    """The operator and operand of a comparison string (``">= 0.5"`` -> ``(">=", "0.5")``);
    None for anything else."""
    found = _COMPARISON.match(value) if isinstance(value, str) else None
    return found.groups() if found else None


def check_condition(value):
    """``value`` as a condition of :func:`select_rows` (a list becomes a list), or a
    :class:`~privpub.errors.ConfigError` saying why it is none: a condition is a scalar, a
    non-empty list of scalars, or a comparison string whose operand is a number (``==`` and
    ``!=`` may compare text: ``"!= adult"``)."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ConfigError("an empty list matches nothing")
        for v in value:
            if isinstance(v, (list, tuple, dict)) or v is None:
                raise ConfigError(f"a list of values must hold scalars, got {v!r}")
        return list(value)
    if isinstance(value, dict) or value is None:
        raise ConfigError(
            f"a condition must be a value, a list or a comparison like '>= 0.5', got {value!r}"
        )
    _operand(value)
    return value


def _operand(value):
    """A comparison's operator and its number (None for a text operand of ``==`` / ``!=``);
    None for a value that is no comparison."""
    found = comparison(value)
    if found is None:
        return None
    op, operand = found
    try:
        return op, float(operand)
    except ValueError:
        if op not in ("==", "!="):
            raise ConfigError(f"comparison {value!r} needs a number after {op!r}") from None
        return op, None


def _numbers(column: pd.Series) -> np.ndarray:
    import pandas as pd  # imported by the caller already; privpub.results stays light

    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)


def _compare(column: pd.Series, op: str, number: float) -> np.ndarray:
    """Rows whose number satisfies ``<column> <op> number``, ``==`` meaning equal up to
    the relative tolerance; a value that is no number never does."""
    values = _numbers(column)
    close = np.isclose(values, number, rtol=_RTOL, atol=0.0)
    with np.errstate(invalid="ignore"):
        return {
            ">=": (values > number) | close,
            "<=": (values < number) | close,
            ">": (values > number) & ~close,
            "<": (values < number) & ~close,
            "==": close,
            "!=": ~close & ~np.isnan(values),
        }[op]


def _matches(column: pd.Series, wanted) -> np.ndarray:
    """Rows of ``column`` that satisfy one condition value (no list), empty rows aside."""
    found = _operand(wanted)
    if found is not None:
        op, number = found
        if number is not None:
            return _compare(column, op, number)
        text = column.astype(str).to_numpy()
        operand = comparison(wanted)[1]
        return text == operand if op == "==" else text != operand
    if isinstance(wanted, bool):
        wanted = float(wanted)
    try:
        number = float(wanted)
    except (TypeError, ValueError):
        return (column.astype(str) == str(wanted)).to_numpy()
    numeric = _numbers(column)
    if np.isnan(numeric).all() and column.notna().any():  # a text column: compare as text
        return (column.astype(str) == str(wanted)).to_numpy()
    return np.isclose(numeric, number, rtol=_RTOL, atol=0.0)


def condition_mask(frame: pd.DataFrame, column: str, wanted, *, empty: str) -> np.ndarray:
    """The rows of ``frame`` whose ``column`` satisfies ``wanted``, as a boolean array.

    Parameters
    ----------
    frame : DataFrame
        Tidy results.
    column : str
        A result column; ``dataset`` matches the dataset's name or, when the frame has a
        ``dataset_label`` column, its display label (``facebook (lcc=true)``), and ``"!= x"``
        a dataset that is ``x`` by neither.
    wanted : scalar, list or str
        A value (numbers, or text that reads as a number, compared as numbers equal up to
        a relative 1e-12; other values as text; a number in a column without any number
        as text), a list (any of its values) or a comparison string (``">= 0.5"``,
        ``"< 2"``, ``"!= 1"``: numbers, with ``==`` up to the same tolerance; ``"== a"``,
        ``"!= a"``: text). A value that is no number never satisfies a comparison of
        numbers.
    empty : {"keep", "drop"}
        A row whose ``column`` is empty (NaN, None) never matches a value; ``keep`` passes
        it anyway (a condition on a parameter ignores the mechanisms that do not take it),
        ``drop`` fails it.

    Raises
    ------
    PrivpubError
        ``column`` is not a column of ``frame``, or ``empty`` is neither policy.
    ConfigError
        ``wanted`` is no condition (:func:`check_condition`).
    """
    if empty not in EMPTY_POLICIES:
        raise PrivpubError(f"empty must be one of {EMPTY_POLICIES}, got {empty!r}")
    names = [column, "dataset_label"] if column == "dataset" else [column]
    names = [c for c in names if c in frame.columns]
    if not names:
        raise PrivpubError(f"the results have no column {column!r}")
    mask = np.zeros(len(frame), dtype=bool)
    for option in wanted if isinstance(wanted, (list, tuple)) else [wanted]:
        negated = (comparison(option) or ("",))[0] == "!="  # "!= x": x by no name
        hit = np.full(len(frame), negated)
        for name in names:
            found = _matches(frame[name], option) & frame[name].notna().to_numpy()
            hit = hit & found if negated else hit | found
        mask |= hit
    if empty == "keep" and column in frame.columns:
        mask |= frame[column].isna().to_numpy()
    return mask


def select_rows(frame: pd.DataFrame, where: dict | None, *, empty: str) -> pd.DataFrame:
    """The rows of ``frame`` that satisfy every condition of ``where`` (column -> condition,
    e.g. ``{"epsilon": ">= 0.5", "dataset": ["facebook", "enron"]}``): the one row selector
    of figures, tables and claims. Each condition as in :func:`condition_mask`, with the
    same ``empty`` policy."""
    for column, wanted in (where or {}).items():
        frame = frame[condition_mask(frame, column, wanted, empty=empty)]
    return frame
