"""Locks on chunks of trials: two runs on one store never compute the same trial twice.

A run locks a chunk (the trials of the cells that hash into one of :data:`CHUNKS` buckets,
under one base seed) before it hands the chunk's first trial to a worker, by creating
``store/locks/<chunk>.lock`` exclusively; a chunk another live run holds is deferred,
and so is one another run computed since this run read the store (its ``<chunk>.done``
marker is newer). The run releases its locks once their rows are written (marker first,
then the lock), then waits for the chunks it deferred and computes only what the store
still lacks. A lock whose process is dead (same host) is stale and taken over. A store
written before the locks had this name holds a ``claims/`` directory that nothing reads.
The rationale is in docs/design.md (Experiments: "Faults").
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from privpub.experiments.seeding import stable_hash

__all__ = ["TrialLocks", "LOCKS_DIR"]

#: The locks' directory in a store.
LOCKS_DIR = "locks"
#: How often a run waiting for another run's chunks looks again (seconds).
POLL_SECONDS = 0.5
#: Chunks per base seed: a run creates at most this many lock files.
CHUNKS = 64


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class TrialLocks:
    """The locks of one run (one round of it) on the chunks of a store's trials.

    ``root`` is the store's :data:`LOCKS_DIR`; ``trials`` are ``(cell, rep, ...)`` tuples;
    ``seed`` is the run's base seed; ``since`` the time (``time.time()``) this run's list of
    trials was read from the store.
    """

    def __init__(self, root: Path | str, seed: int, since: float):
        self.root = Path(root)
        self.seed = seed
        self.since = since
        self.held: set[str] = set()
        self.deferred: list[tuple] = []  # trials of chunks another run holds or computed
        self._deferred_chunks: set[str] = set()
        self._host = socket.gethostname()
        self._chunks: dict[str, str] = {}  # cell id -> its chunk

    def _chunk(self, trial: tuple) -> str:
        cell_id = trial[0].cell_id
        if cell_id not in self._chunks:
            bucket = int(stable_hash(cell_id)[:8], 16) % CHUNKS
            self._chunks[cell_id] = f"seed{self.seed}-{bucket:02d}"
        return self._chunks[cell_id]

    def _path(self, chunk: str, kind: str = "lock") -> Path:
        return self.root / f"{chunk}.{kind}"

    def take(self, trials: Iterable[tuple]) -> Iterator[tuple]:
        """The trials whose chunk this run holds or could lock, lazily; the others go to
        :attr:`deferred`."""
        for trial in trials:
            chunk = self._chunk(trial)
            if chunk in self.held or (chunk not in self._deferred_chunks
                                      and self._lock(chunk)):
                yield trial
            else:
                self._deferred_chunks.add(chunk)
                self.deferred.append(trial)

    def _done_since(self, chunk: str) -> bool:
        """Whether another run computed the chunk after this run read the store."""
        try:
            return float(json.loads(self._path(chunk, "done").read_text())) >= self.since
        except (OSError, ValueError, TypeError):
            return False

    def _lock(self, chunk: str) -> bool:
        path = self._path(chunk)
        if not self.held:
            self.root.mkdir(parents=True, exist_ok=True)
        if self._done_since(chunk):
            return False
        for _ in range(2):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not self._stale(path):
                    return False
                path.unlink(missing_ok=True)  # its run is gone: take it over
                continue
            with os.fdopen(fd, "w") as fh:
                json.dump({"pid": os.getpid(), "host": self._host, "time": time.time()}, fh)
            if self._done_since(chunk):  # released by its run between the two looks
                path.unlink(missing_ok=True)
                return False
            self.held.add(chunk)
            return True
        return False

    def _stale(self, path: Path) -> bool:
        """A lock of a dead process of this host (or unreadable and a minute old)."""
        try:
            owner = json.loads(path.read_text())
            return owner["host"] == self._host and not _alive(int(owner["pid"]))
        except FileNotFoundError:
            return True
        except (OSError, ValueError, KeyError, TypeError):
            try:
                return time.time() - path.stat().st_mtime > 60
            except OSError:
                return True

    def release(self) -> None:
        """Drop this run's locks (call once their rows are in the store), leaving the time
        in each chunk's ``.done`` marker."""
        now = time.time()
        for chunk in self.held:
            done = self._path(chunk, "done")
            tmp = done.with_name(f".{done.name}.{os.getpid()}.tmp")
            try:
                tmp.write_text(json.dumps(now))
                os.replace(tmp, done)
            except OSError:
                pass
            self._path(chunk).unlink(missing_ok=True)
        self.held.clear()

    def wait(self) -> None:
        """Until every deferred chunk is released by its run, or stale."""
        waiting = set(self._deferred_chunks)
        noted = False
        while waiting:
            waiting = {c for c in waiting
                       if self._path(c).exists() and not self._stale(self._path(c))}
            if waiting and not noted:
                print(f"privpub: note: waiting for {len(waiting)} chunk(s) of trials another "
                      f"run is computing ({self.root}); they are not computed twice",
                      file=sys.stderr, flush=True)
                noted = True
            if waiting:
                time.sleep(POLL_SECONDS)
