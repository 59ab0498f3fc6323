"""Test-session settings shared by every package's tests."""

import atexit
import os
import shutil
import sys
import tempfile


def _scratch(prefix: str) -> str:
    """A temporary directory removed when this process exits."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


# computed pieces cached on disk (privpub/cache.py) go to a fresh directory per test session,
# so tests neither read a developer's cache nor leave entries behind
if "PRIVPUB_CACHE_DIR" not in os.environ:  # pytest-xdist workers inherit the controller's
    os.environ["PRIVPUB_CACHE_DIR"] = _scratch("privpub-test-cache-")

# numba's on-disk cache is not safe when two processes write the same entry at once
# (numba/numba#4807: the reader can load a half-written index and crash). On a fresh clone
# both pytest-xdist workers compile the same functions together, so each gets its own cache
# (set here, in the worker: a directory inherited from the controller would be shared).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if "numba" not in sys.modules and (_WORKER or "NUMBA_CACHE_DIR" not in os.environ):
    os.environ["NUMBA_CACHE_DIR"] = _scratch(f"privpub-numba-{_WORKER or 'main'}-")
