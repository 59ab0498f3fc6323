"""Seeds that depend only on *what* is computed, never on order, n_jobs or machine.

Every (cell, repetition) gets its own :class:`numpy.random.SeedSequence` derived from the
base seed and a stable hash of the cell's identity (dataset, options, mechanism and
parameters; the sha256 of their canonical JSON). Synthetic datasets get a seed derived from
the base seed and the dataset's identity alone, so every mechanism of an experiment sees the
same data.
"""

from __future__ import annotations

import hashlib
import json
import numbers

import numpy as np

__all__ = [
    "canonical",
    "canonical_json",
    "stable_hash",
    "stable_hash_words",
    "seed_sequence",
    "trial_seeds",
]


def canonical(value):
    """Normalise a config value for hashing/display: integral floats become ints (so that
    ``epsilon=1`` and ``epsilon=1.0`` are the same cell), tuples become lists, mappings are
    key-sorted, numpy scalars become Python scalars."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)) or hasattr(value, "__iter__"):
        return [canonical(v) for v in value]
    raise TypeError(f"cannot use a {type(value).__name__} as a config value: {value!r}")


def canonical_json(value) -> str:
    """Compact, key-sorted JSON of ``canonical(value)``."""
    return json.dumps(canonical(value), sort_keys=True, separators=(",", ":"))


def stable_hash(value) -> str:
    """Hex sha256 of the canonical JSON of ``value`` (same on every machine and run)."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def stable_hash_words(value, n_words: int = 4) -> tuple[int, ...]:
    """The first ``n_words`` 32-bit words of :func:`stable_hash`, for a SeedSequence key."""
    digest = bytes.fromhex(stable_hash(value))
    return tuple(int.from_bytes(digest[4 * i : 4 * i + 4], "little") for i in range(n_words))


def seed_sequence(base_seed: int, identity, *extra: int) -> np.random.SeedSequence:
    """``SeedSequence(base_seed, spawn_key=hash(identity) + extra)``.

    Examples
    --------
    >>> a = seed_sequence(0, {"mechanism": "m", "epsilon": 1.0}, 3)
    >>> b = seed_sequence(0, {"epsilon": 1, "mechanism": "m"}, 3)
    >>> a.generate_state(2).tolist() == b.generate_state(2).tolist()
    True
    """
    return np.random.SeedSequence(int(base_seed), spawn_key=(*stable_hash_words(identity), *extra))


def trial_seeds(base_seed: int, identity, rep: int):
    """The streams of one trial: ``(trial seed sequence, mechanism stream, metric stream)``,
    where ``metric stream(name)`` is a :class:`numpy.random.SeedSequence` of its own for each
    metric, so a metric's value does not depend on which other metrics a run computes (and
    an experiment may reuse another's rows of the same trial)."""
    ss = seed_sequence(base_seed, identity, rep)
    mechanism_ss = ss.spawn(1)[0]

    def metric_ss(name: str) -> np.random.SeedSequence:
        return np.random.SeedSequence(
            int(base_seed), spawn_key=(*ss.spawn_key, 1, *stable_hash_words(name, 2))
        )

    return ss, mechanism_ss, metric_ss
