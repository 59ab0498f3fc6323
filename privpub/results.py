"""The tidy results format, shared by what writes results (experiments/) and what reads
them (plots/): one row per (task, metric), where a task is one repetition of one cell under
one base seed. :mod:`experiments.store` writes and reads the parquet files.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "COLUMN_ORDER",
    "RELEASE_METRIC",
    "SCALES",
    "TASK_KEY",
    "VERDICTS",
    "encode_vector",
    "decode_vector",
]

#: The scales an experiment runs at, smallest first: ``smoke`` (seconds, synthetic data, what
#: the tests run), ``small`` (minutes) and ``paper`` (the paper's datasets and repetitions).
SCALES = ("smoke", "small", "paper")

#: A claim's verdicts, in the order they are counted and shown.
VERDICTS = ("held", "not held", "not evaluated")

#: The columns naming one task (one repetition of one cell under one base seed).
TASK_KEY = ("cell", "base_seed", "rep")

#: ``metric`` of the rows that carry a released vector (experiments with ``keep_releases``)
#: in their ``release`` column; their ``value`` is NaN. The truth of each dataset is stored
#: the same way, with ``mechanism == label == "truth"``.
RELEASE_METRIC = "release"


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
