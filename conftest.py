"""Test-session settings shared by every package's tests."""

import os
import sys
import tempfile

# computed pieces cached on disk (privpub/cache.py) go to a fresh directory per test session,
# so tests neither read a developer's cache nor leave entries behind
os.environ.setdefault("PRIVPUB_CACHE_DIR", tempfile.mkdtemp(prefix="privpub-test-cache-"))

# numba's on-disk cache is not safe when two processes write the same entry at once
# (numba/numba#4807: the reader can load a half-written index and crash). On a fresh clone
# both pytest-xdist workers compile the same functions together, so each gets its own cache.
if "numba" not in sys.modules:
    os.environ.setdefault(
        "NUMBA_CACHE_DIR",
        tempfile.mkdtemp(prefix=f"privpub-numba-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-"),
    )
