"""Checks of RPS's parameters: one clear :class:`~privpub.errors.PrivpubError` (or
:class:`~privpub.errors.DataError` for the input) per bad value, for every part of
:mod:`privpub.mechanisms.rps`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from privpub.errors import DataError, PrivpubError
from privpub.types import Graph

__all__ = ["check_option", "check_share", "check_real", "check_graph"]


def check_option(value, options: Sequence[str], name: str) -> str:
    """``value`` if it is one of ``options``, else a :class:`PrivpubError` listing them."""
    if not isinstance(value, str) or value not in options:
        raise PrivpubError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def _is_real(value) -> bool:
    return not isinstance(value, bool) and isinstance(
        value, (int, float, np.integer, np.floating)
    )


def check_share(value, name: str, *, allow_one: bool = True) -> float:
    """A budget share in (0, 1] (or (0, 1) with ``allow_one=False``)."""
    if not _is_real(value):
        raise PrivpubError(f"{name} must be a number in (0, 1], got {value!r}")
    value = float(value)
    top_ok = value <= 1.0 if allow_one else value < 1.0
    if not (value > 0.0 and top_ok):
        interval = "(0, 1]" if allow_one else "(0, 1)"
        raise PrivpubError(f"{name} must lie in {interval}, got {value}")
    return value


def check_real(value, name: str, *, low: float, strict: bool = False,
               allow_none: bool = False) -> float | None:
    """A finite number ``>= low`` (``> low`` with ``strict``) as a float; None passes
    through with ``allow_none``."""
    if value is None and allow_none:
        return None
    ok = _is_real(value) and math.isfinite(value) and (value > low if strict else value >= low)
    if not ok:
        what = f"{'None or ' if allow_none else ''}a finite number {'>' if strict else '>='}"
        raise PrivpubError(f"{name} must be {what} {low:g}, got {value!r}")
    return float(value)


def check_graph(graph, name: str) -> int:
    """The number of nodes of ``graph``, a :class:`~privpub.types.Graph` with at least one
    node (``name``: the mechanism, for the message)."""
    if not isinstance(graph, Graph):
        raise DataError(f"{name} needs a Graph, got {type(graph).__name__}")
    if graph.n_nodes == 0:
        raise DataError(f"{name} needs a graph with at least one node")
    return graph.n_nodes
