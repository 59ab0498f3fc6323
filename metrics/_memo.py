"""Per-object memos shared by the metric modules (private: not a plug-in module).

Graphs and series are immutable, so a value computed from one (a truth's statistics, a
release's BFS) can be kept for the object's lifetime. A value that also depends on random
draws is keyed by the generator's starting state too (:func:`stream_key`): metrics that
share a stream (``register_metric(stream=...)``) then share it, while another repetition
of the same object (the original graph is one object across a worker's trials) gets its
own, so a result never depends on which trials a process ran before.
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["memo", "stream_key"]

_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def memo(obj, key, compute):
    """``compute()``, kept per ``obj`` and ``key`` while ``obj`` lives (computed every time
    for an object that cannot be weakly referenced)."""
    try:
        store = _MEMO.setdefault(obj, {})
    except TypeError:
        return compute()
    if key not in store:
        store[key] = compute()
    return store[key]


def stream_key(rng) -> str:
    """The starting state of ``rng`` (a Generator), or its ``repr`` (a seed or None)."""
    if isinstance(rng, np.random.Generator):
        return repr(sorted(rng.bit_generator.state.items()))
    return repr(rng)
