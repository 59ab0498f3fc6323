"""Test-session settings shared by every package's tests."""

import os
import tempfile

# computed pieces cached on disk (privpub/cache.py) go to a fresh directory per test session,
# so tests neither read a developer's cache nor leave entries behind
os.environ.setdefault("PRIVPUB_CACHE_DIR", tempfile.mkdtemp(prefix="privpub-test-cache-"))
