"""The result store: tidy rows in parquet part files under one directory.

:class:`ResultStore` reads and writes them, :class:`StoreWriter` streams a run's rows into
one. Their layout and reading rules are in docs/design.md (Experiments: "Store",
"Code-aware reuse"); the columns are :mod:`privpub.results`'.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from pathlib import Path

import pandas as pd

from privpub.results import (
    COLUMN_ORDER,
    RELEASE_METRIC,
    TRIAL_KEY,
    decode_vector,
    encode_vector,
)

__all__ = [
    "ResultStore",
    "StoreWriter",
    "COLUMN_ORDER",
    "RELEASE_METRIC",
    "TRIAL_KEY",
    "encode_vector",
    "decode_vector",
    "metric_family",
]

_ROWS = re.compile(r"-(\d+)r\.parquet$")


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


def metric_family(metric: pd.Series, names) -> pd.Series:
    """The metric each row belongs to: its ``metric`` if that is one of ``names``, else the
    part before the first ``/`` (a curve metric such as ``reliable_email`` is stored as
    rows ``reliable_email/<x>``; an ``info/<key>`` row is matched by its whole name)."""
    metric = metric.astype(str)
    return metric.where(metric.isin(set(names)), metric.str.split("/", n=1).str[0])


class ResultStore:
    """Parquet part files in ``root`` (created on first write). A part that cannot be read
    is moved to ``root/quarantine/`` with a one-line note (:attr:`quarantined`)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        #: (file name, its row count when the name tells it) of every part moved away
        self.quarantined: list[tuple[str, int | None]] = []

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
        name = f"part-{stamp}-{os.getpid()}-{uuid.uuid4().hex[:8]}-{len(frame)}r.parquet"
        tmp = self.root / f".{name}.tmp"
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, self.root / name)
        return self.root / name

    def load(self, *, statuses=("ok",)) -> pd.DataFrame:
        """The rows of every trial's latest attempt whose ``status`` is in ``statuses``
        (``"ok"``, ``"error"``, ``"skipped"``); all of them with ``statuses=None``."""
        frame = self._latest()
        if frame.empty or statuses is None:
            return frame
        return frame[frame["status"].isin(list(statuses))].reset_index(drop=True)

    def _latest(self) -> pd.DataFrame:
        parts = self.parts()
        if not parts:
            return pd.DataFrame()
        frames = []
        for p in parts:
            try:
                frames.append(pd.read_parquet(p))
            except Exception as exc:  # a foreign or damaged file must not hide the rest
                self._quarantine(p, exc)
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        if frame.empty:
            return frame
        for column in TRIAL_KEY:  # stores written before a column existed
            if column not in frame.columns:
                frame[column] = -1 if column == "base_seed" else None
        frame["base_seed"] = frame["base_seed"].fillna(-1).astype("int64")
        last = frame.groupby(list(TRIAL_KEY), dropna=False)["written_at"].transform("max")
        frame = frame[frame["written_at"] == last]
        frame = frame.drop_duplicates([*TRIAL_KEY, "metric"], keep="last")
        # one order whatever order the trials finished in, so that every sum over the rows
        # (a mean, a claim's number) is the same to the last bit for any n_jobs
        frame = frame.sort_values([*TRIAL_KEY, "metric"], kind="stable", na_position="first")
        return _ordered(frame).reset_index(drop=True)

    def _quarantine(self, part: Path, exc: Exception) -> None:
        """Move an unreadable part out of the store, once, saying so in one line; its trials
        are then missing and recomputed by the next run."""
        import sys

        match = _ROWS.search(part.name)
        rows = int(match.group(1)) if match else None
        target = self.root / "quarantine" / part.name
        try:
            target.parent.mkdir(exist_ok=True)
            os.replace(part, target)
        except OSError:  # another process moved it first, or a read-only store
            if part.exists():
                return
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        held = f" ({rows} rows)" if rows is not None else ""
        print(f"privpub: note: unreadable result part {part.name}{held} moved to "
              f"{target.parent} ({reason}); its trials are recomputed", file=sys.stderr,
              flush=True)
        self.quarantined.append((part.name, rows))

    def trials(self, metrics) -> dict[tuple[str, int, int], str | None]:
        """``(cell, base_seed, rep) -> code_hash`` of every trial whose latest attempt is
        done: ok with rows of every metric in ``metrics`` (a curve metric's rows are
        ``<metric>/<x>``: see :func:`metric_family`), or skipped (not applicable)."""
        frame = self._latest()
        if frame.empty:
            return {}
        if "code_hash" not in frame.columns:
            frame["code_hash"] = None
        needed = set(metrics)
        family = metric_family(frame["metric"], needed)
        flags = frame.assign(
            _error=frame["status"].eq("error"),
            _skipped=frame["status"].eq("skipped"),
            _have=family.where(frame["status"].eq("ok") & family.isin(needed)),
        )
        agg = flags.groupby(list(TRIAL_KEY), dropna=False).agg(
            error=("_error", "any"),
            skipped=("_skipped", "all"),
            have=("_have", "nunique"),
            code=("code_hash", "first"),
        )
        agg = agg[~agg["error"] & (agg["skipped"] | (agg["have"] >= len(needed)))]
        return {
            (str(c), int(b), int(r)): (None if pd.isna(code) else str(code))
            for (c, b, r), code in zip(agg.index, agg["code"], strict=True)
        }

    # ------------------------------------------------------------------ code fingerprints
    @property
    def _code_file(self) -> Path:
        return self.root / "code.json"

    def code_modules(self) -> dict[str, dict[str, str]]:
        """code hash -> {module: hash} of the code that wrote rows here."""
        try:
            return json.loads(self._code_file.read_text())
        except (OSError, ValueError):
            return {}

    def record_code(self, fingerprints: dict[str, dict[str, str]]) -> None:
        """Remember the per-module hashes behind some code hashes (merged, atomic)."""
        known = self.code_modules()
        if all(k in known for k in fingerprints):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        known.update(fingerprints)
        tmp = self.root / f".code-{uuid.uuid4().hex[:8]}.tmp"
        tmp.write_text(json.dumps(known, sort_keys=True))
        os.replace(tmp, self._code_file)


class StoreWriter:
    """Rows written to a :class:`ResultStore` as they come, one part file at most every
    ``flush_seconds``: a crash or Ctrl-C loses at most the last few seconds of work."""

    def __init__(self, store: ResultStore, *, flush_seconds: float = 5.0):
        self.store = store
        self.flush_seconds = flush_seconds
        self._buffer: list[dict] = []
        self._last_flush = time.monotonic()

    def add(self, rows: list[dict]) -> None:
        """Buffer ``rows``; write the buffer when the last write is ``flush_seconds`` old."""
        self._buffer.extend(rows)
        if time.monotonic() - self._last_flush > self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Write what is buffered (nothing when it is empty)."""
        self.store.write(self._buffer)
        self._buffer, self._last_flush = [], time.monotonic()
