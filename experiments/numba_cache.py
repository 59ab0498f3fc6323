"""numba's on-disk cache made safe for several processes at once: a file lock per cache.

numba writes each cache file atomically (a temporary file, then a rename), but an entry is
two files and the index is read, changed and written back: two workers compiling two
signatures of one function on an empty cache can both take data file ``<f>.1.nbc``, and
the index then names the other signature's machine code, which crashes when it runs
(numba/numba#4807, #10128: the maintainers suggest a file lock). :func:`guard_numba_cache`
serialises numba's cache reads and writes per cache directory with ``fcntl.flock``;
compiling itself stays parallel. docs/design.md (Experiments: "Faults") has the context.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["guard_numba_cache"]

_GUARDED = False


@contextlib.contextmanager
def _locked(cache_path: str, shared: bool):
    try:
        import fcntl

        os.makedirs(cache_path, exist_ok=True)
        fd = os.open(os.path.join(cache_path, ".privpub-lock"), os.O_CREAT | os.O_RDWR, 0o644)
    except (ImportError, OSError):  # no fcntl (Windows) or a read-only cache: as numba does
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def guard_numba_cache(*, force: bool = False) -> bool:
    """Install the lock into numba's cache (once per process) if numba is imported (or
    ``force``: import it); True when installed."""
    global _GUARDED
    if _GUARDED:
        return True
    if "numba" not in sys.modules and not force:
        return False
    try:
        from numba.core.caching import IndexDataCacheFile
    except ImportError:
        return False
    save, load = IndexDataCacheFile.save, IndexDataCacheFile.load

    def locked_save(self, key, data):
        with _locked(self._cache_path, shared=False):
            return save(self, key, data)

    def locked_load(self, key):
        with _locked(self._cache_path, shared=True):
            return load(self, key)

    IndexDataCacheFile.save, IndexDataCacheFile.load = locked_save, locked_load
    _GUARDED = True
    return True
