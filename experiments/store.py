"""The result store: tidy rows in parquet part files under one directory.

Each flush writes a new part file (``part-<time>-<pid>-<random>.parquet``, written to a
temporary name and renamed, so a crash never leaves half a file). Several processes — the
jobs of a Hydra multirun, say — can write to the same store at once. Reading concatenates
all parts and keeps, for each (cell, rep, metric), the most recently written row, so a
recomputed cell supersedes the old one and a later success supersedes a recorded failure.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["ResultStore", "COLUMN_ORDER", "RELEASE_METRIC", "encode_vector", "decode_vector"]

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
    "seed",
    "metric",
    "value",
    "seconds",
    "peak_mb",
    "privacy",
    "caveat",
    "epsilon_spent",
    "ledger",
    "verified",
    "status",
    "error",
    "cell",
    "release",
    "code_version",
    "written_at",
)


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    lead = [c for c in COLUMN_ORDER if c in frame.columns]
    rest = sorted(c for c in frame.columns if c not in COLUMN_ORDER)
    return frame[lead + rest]


def _normalise_column(series: pd.Series) -> pd.Series:
    """Make a column storable: mixed numbers/strings become strings, all-numeric stays numeric."""
    values = series.dropna()
    if values.empty:
        return series
    if values.map(lambda v: isinstance(v, (bool, bytes))).all():
        return series
    if values.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).all():
        return pd.to_numeric(series)
    return series.map(lambda v: v if v is None or (isinstance(v, float) and pd.isna(v)) else str(v))


class ResultStore:
    """Parquet part files in ``root`` (created on first write)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def parts(self) -> list[Path]:
        return sorted(self.root.glob("part-*.parquet")) if self.root.is_dir() else []

    def write(self, rows: list[dict]) -> Path | None:
        """Append ``rows`` as one new part file; returns its path (None if no rows)."""
        if not rows:
            return None
        self.root.mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame.from_records(rows)
        for column in frame.columns:
            if frame[column].dtype == object:
                frame[column] = _normalise_column(frame[column])
        stamp = time.strftime("%Y%m%dT%H%M%S")
        name = f"part-{stamp}-{os.getpid()}-{uuid.uuid4().hex[:8]}.parquet"
        tmp = self.root / f".{name}.tmp"
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, self.root / name)
        return self.root / name

    def load(self, *, include_errors: bool = False) -> pd.DataFrame:
        """All current rows: the latest per (cell, rep, metric); failures only if asked and
        not superseded by a success of the same (cell, rep)."""
        parts = self.parts()
        if not parts:
            return pd.DataFrame()
        frames = []
        for p in parts:
            try:
                frames.append(pd.read_parquet(p))
            except Exception as exc:  # a foreign or damaged file must not hide the rest
                import warnings

                warnings.warn(f"skipping unreadable result part {p}: {exc}", stacklevel=2)
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        if frame.empty:
            return frame
        frame = frame.sort_values("written_at", kind="stable")
        frame = _ordered(frame.drop_duplicates(["cell", "rep", "metric"], keep="last"))
        ok = frame[frame["status"] == "ok"]
        if not include_errors:
            return ok.reset_index(drop=True)
        done = set(zip(ok["cell"], ok["rep"], strict=True))
        errors = frame[frame["status"] != "ok"]
        errors = errors[
            [(c, r) not in done for c, r in zip(errors["cell"], errors["rep"], strict=True)]
        ]
        return pd.concat([ok, errors], ignore_index=True)

    def completed(self, metrics) -> set[tuple[str, int]]:
        """(cell, rep) pairs with a successful row for every metric in ``metrics``."""
        frame = self.load()
        if frame.empty:
            return set()
        needed = set(metrics)
        have = frame.groupby(["cell", "rep"])["metric"].agg(set)
        return {key for key, got in have.items() if needed <= got}
