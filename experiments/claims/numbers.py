"""How the claims write numbers and groups: JSON-plain values, three significant digits,
group keys and their order (``docs/claims.md``, "Output")."""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "GREEK",
    "is_number",
    "plain",
    "num",
    "ratio_of",
    "ratio_text",
    "key_value",
    "sort_key",
    "group_order",
    "display",
    "group_text",
]

#: Parameters written as their Greek letter in summaries.
GREEK = {"epsilon": "ε", "theta": "θ", "delta": "δ"}


def is_number(value) -> bool:
    """A number, not a boolean."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def plain(value):
    """A JSON-friendly scalar: Python numbers, integral floats as ints, NaN/inf as None."""
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def num(value) -> str:
    """A number in three significant digits (large numbers in full)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    value = float(value)
    if math.isinf(value):
        return "∞"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def ratio_of(ours: float, other: float) -> float:
    """``ours / other``; 1 when both are 0, infinite when only ``other`` is."""
    if other == 0:
        return 1.0 if ours == 0 else math.inf
    return ours / other


def ratio_text(value: float) -> str:
    """A ratio in three significant digits, or four decimals when it is within 1% of 1."""
    if isinstance(value, float) and math.isfinite(value) and 0 < abs(value - 1) < 0.01:
        return f"{value:.4f}"
    return num(value)


def key_value(value):
    """Hashable canonical form of a group column value (NaN -> None)."""
    if value is None:
        return None
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        value = float(value)
        return None if math.isnan(value) else value
    return str(value)


def sort_key(value):
    """Numbers before text, numbers by value."""
    if isinstance(value, float):
        return (0, value, "")
    return (1, 0.0, "" if value is None else str(value))


def group_order(key: tuple) -> list:
    """The order of group keys: position by position, as :func:`sort_key`."""
    return [sort_key(v) for v in key]


def display(column: str) -> str:
    """A group column as it is named in the output (``dataset_label`` is ``dataset``)."""
    return "dataset" if column == "dataset_label" else column


def group_text(group: dict) -> str:
    """A group as text: ``facebook ε=0.1``."""
    parts = []
    for col, value in group.items():
        if col == "dataset":
            parts.append(str(value))
        else:
            parts.append(f"{GREEK.get(col, col)}={num(value) if is_number(value) else value}")
    return " ".join(parts) or "all results"
