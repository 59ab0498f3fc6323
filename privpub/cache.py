"""A disk cache for deterministic, expensive pieces that many runs need.

Flowgraph's exact projections take about a minute per graph on DBLP and Twitter, and every
worker process of every experiment needs them; a cold computation is done once and read
afterwards. An entry is keyed by the content it is computed from (e.g. a graph's CSR
digest and theta) and by the code that computes it (the sha256 of the module's source), so
an edited module never reads a stale entry. Values are dictionaries of numpy arrays and
numbers, stored with :func:`numpy.savez` (no pickle) and written atomically.

The directory is ``$PRIVPUB_CACHE_DIR``, else the user cache dir (``pooch.os_cache``); set
``PRIVPUB_CACHE_DIR=off`` to compute everything afresh.

Modules that keep such values in memory too (projection profiles, Flowgraph projections)
register their ``clear`` with :func:`register_clear`; inside ``with cold():`` every such
cache is emptied first and the disk cache is neither read nor written, so a running-time
experiment (day2016 Table 3) measures whole computations.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import os
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["cache_dir", "disk_cached", "register_clear", "cold"]

ENV_VAR = "PRIVPUB_CACHE_DIR"

_COLD = contextvars.ContextVar("privpub_cold", default=False)
_CLEARS: list[Callable[[], None]] = []


def register_clear(clear: Callable[[], None]) -> Callable[[], None]:
    """Register a function that empties an in-memory cache (see :func:`cold`)."""
    _CLEARS.append(clear)
    return clear


@contextlib.contextmanager
def cold():
    """Empty every registered in-memory cache and bypass the disk cache inside the block."""
    for clear in _CLEARS:
        clear()
    token = _COLD.set(True)
    try:
        yield
    finally:
        _COLD.reset(token)


def cache_dir() -> Path | None:
    """The cache directory, or None when caching is off."""
    value = os.environ.get(ENV_VAR, "")
    if value.lower() == "off":
        return None
    if value:
        return Path(value).expanduser()
    import pooch

    return Path(pooch.os_cache("privpub")) / "compute"


@functools.cache
def _source_hash(module: str) -> str:
    path = getattr(sys.modules.get(module), "__file__", None)
    if not path:
        return "unknown"
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def disk_cached(namespace: str, key: dict, compute: Callable[[], dict], *, module: str) -> dict:
    """``compute()`` (a dict of arrays and numbers), read from the cache when an entry for
    ``key`` computed by the current source of ``module`` exists, else computed and stored."""
    root = cache_dir()
    if root is None or _COLD.get():
        return compute()
    ident = json.dumps({"key": key, "code": _source_hash(module)}, sort_keys=True, default=str)
    path = root / namespace / f"{hashlib.sha256(ident.encode()).hexdigest()[:32]}.npz"
    try:
        with np.load(path, allow_pickle=False) as stored:
            return {name: stored[name][()] if stored[name].ndim == 0 else stored[name]
                    for name in stored.files}
    except (OSError, ValueError, KeyError):
        pass
    value = compute()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.{uuid.uuid4().hex[:8]}.npz")
        np.savez(tmp, **{name: np.asarray(v) for name, v in value.items()})
        os.replace(tmp, path)
    except OSError:  # a read-only or full disk only costs the next run the computation
        pass
    return value
