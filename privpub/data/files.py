"""Where data files live, how they are checked, and (only when allowed) fetched.

Every real dataset is a set of files under one *data directory*: ``data_dir`` if given,
else the environment variable ``PRIVPUB_DATA_DIR``, else the user cache directory
``pooch.os_cache("privpub")``. Each file is known by its path relative to that directory,
its size and sha256, its publisher's official URL and, where one exists, a URL from which
the very same bytes (or the same content, compressed here) can be downloaded.

A missing file fails with a :class:`~privpub.errors.DataError` that names the file, the
official URL, the expected path and the ways to fix it; a file whose sha256 differs fails
as corrupt, with the expected and the actual hash. Hashes are checked once per process per
file (cached by path, modification time and size). Nothing is downloaded unless the caller
passes ``allow_download=True``.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

from privpub.errors import DataError, PrivpubError

__all__ = [
    "ENV_VAR",
    "FileSpec",
    "resolve_data_dir",
    "sha256_of",
    "verify_file",
    "check_hash",
    "HashMismatch",
    "ensure_file",
    "clear_hash_cache",
    "user_file_sha256",
]

#: Environment variable naming the data directory.
ENV_VAR = "PRIVPUB_DATA_DIR"

_TRANSFORMS = (None, "gzip", "gunzip")


@dataclass(frozen=True)
class FileSpec:
    """One data file of a dataset.

    Attributes
    ----------
    path : str
        Path relative to the data directory, with ``/`` separators.
    sha256 : str
        SHA-256 (hex) of the file as stored.
    url : str
        Official source: the original publisher's download URL or dataset page.
    size : int
        Size in bytes of the file as stored.
    download_url : str or None
        A direct URL whose bytes, after ``transform``, have the same content as the stored
        file (verified by ``sha256`` or ``content_sha256``). None when no such URL is known,
        e.g. when the publisher only offers an archive or a login-protected page.
    transform : {None, "gzip", "gunzip"}
        How the downloaded bytes become the stored file: kept as they are, gzip-compressed
        here (the stored copy is a ``.gz`` of the download), or gunzipped.
    content_sha256 : str or None
        For a stored ``.gz`` file: SHA-256 of its uncompressed content. A file whose own hash
        differs but whose content matches this one is accepted (gzip output depends on the
        compressor's version and settings, the content does not).
    source : str
        Provenance of the stored copy (the repository snapshot it was taken from).
    """

    path: str
    sha256: str
    url: str
    size: int
    download_url: str | None = None
    transform: str | None = None
    content_sha256: str | None = None
    source: str = ""

    def __post_init__(self):
        if self.transform not in _TRANSFORMS:
            raise PrivpubError(f"{self.path}: transform must be one of {_TRANSFORMS}")

    @property
    def name(self) -> str:
        """The file name (last path component)."""
        return self.path.rsplit("/", 1)[-1]


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: ``data_dir``, else ``$PRIVPUB_DATA_DIR``, else the user cache.

    Parameters
    ----------
    data_dir : str or path-like, optional
        Explicit directory; ``~`` is expanded. An empty string counts as not given.

    Returns
    -------
    pathlib.Path
        The directory (it need not exist; loading a file from it is what fails).
    """
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir).expanduser()
    env = os.environ.get(ENV_VAR, "")
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("privpub"))


# --------------------------------------------------------------------------- hashing
_VERIFIED: dict[tuple[str, str, int, int], bool] = {}
_LOCK = threading.Lock()


def clear_hash_cache() -> None:
    """Forget which files were verified (the next load re-hashes them)."""
    with _LOCK:
        _VERIFIED.clear()
        _USER_FILES.clear()


def sha256_of(path: str | os.PathLike, *, uncompress: bool = False) -> str:
    """SHA-256 (hex) of a file, or of its gunzipped content when ``uncompress`` is true."""
    opener = gzip.open if uncompress else open
    with opener(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


_USER_FILES: dict[tuple[str, int, int], str] = {}


def user_file_sha256(path: str | os.PathLike, *, expected: str | None = None) -> str:
    """SHA-256 of a user's data file, computed once per process per file version (path,
    modification time, size).

    Raises
    ------
    DataError
        If the file does not exist, or its sha256 is not ``expected`` (when given): the file
        changed since the experiment naming it was resolved.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {path} does not exist" if not path.exists()
                        else f"data file {path} is not a regular file")
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    with _LOCK:
        digest = _USER_FILES.get(key)
    if digest is None:
        try:
            digest = sha256_of(path)
        except OSError as exc:
            raise DataError(f"cannot read data file {path}: {exc}") from None
        with _LOCK:
            _USER_FILES[key] = digest
    if expected and digest != expected:
        raise DataError(f"data file {path} changed since this experiment was set up: its "
                        f"sha256 is {digest}, the experiment's cells name {expected}; rerun "
                        "the command to key its results by the new content")
    return digest


@dataclass(frozen=True)
class HashMismatch:
    """Why a file failed its hash check (see :func:`check_hash`).

    Attributes
    ----------
    expected, actual : str
        The sha256 the file should have and the one it has.
    content_expected, content_actual : str or None
        For a ``.gz`` file with a known content hash: the expected sha256 of the uncompressed
        content and the one found (or why it could not be read).
    size : int
        The file's size in bytes (``FileSpec.size`` is the expected one).
    """

    expected: str
    actual: str
    size: int
    content_expected: str | None = None
    content_actual: str | None = None

    def describe(self, spec: FileSpec) -> str:
        """One line: expected and actual hashes (and sizes)."""
        text = (f"expected sha256 {self.expected}, got {self.actual} "
                f"({self.size:,} bytes; expected {spec.size:,})")
        if self.content_expected:
            text += (f"; uncompressed content: expected sha256 {self.content_expected}, "
                     f"got {self.content_actual}")
        return text


def check_hash(path: str | os.PathLike, spec: FileSpec) -> HashMismatch | None:
    """Check ``path`` against ``spec``'s sha256 without raising.

    Returns None when the file matches (the result is cached once per process per file
    version), else a :class:`HashMismatch` with the expected and the actual hashes.
    A ``.gz`` file whose uncompressed content has ``spec.content_sha256`` matches too.
    """
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), spec.sha256, st.st_mtime_ns, st.st_size)
    with _LOCK:
        if key in _VERIFIED:
            return None
    actual = sha256_of(path)
    ok = actual == spec.sha256
    content = None
    if not ok and spec.content_sha256:
        try:
            content = sha256_of(path, uncompress=True)
        except (OSError, EOFError, ValueError, zlib.error) as exc:  # BadGzipFile: an OSError
            content = f"unreadable as gzip ({exc})"
        ok = content == spec.content_sha256
    if not ok:
        return HashMismatch(spec.sha256, actual, st.st_size, spec.content_sha256, content)
    with _LOCK:
        _VERIFIED[key] = True
    return None


def verify_file(path: str | os.PathLike, spec: FileSpec) -> None:
    """Check ``path`` against ``spec``'s sha256 (once per process per file version).

    Raises
    ------
    DataError
        If the file's hash (and, for a ``.gz`` file with a known content hash, the hash of
        its content) differs from the expected one.
    """
    bad = check_hash(path, spec)
    if bad is not None:
        raise DataError(
            f"corrupt data file {Path(path)}: its sha256 does not match ({bad.describe(spec)}). "
            f"Replace it with a good copy from {spec.download_url or spec.url}"
            + (" (delete it and load with allow_download=True to have privpub fetch it)."
               if spec.download_url else ".")
        )


# --------------------------------------------------------------------------- fetching
def _missing_message(spec: FileSpec, target: Path, data_dir: Path, dataset: str) -> str:
    where = "does not exist" if not data_dir.is_dir() else "does not hold it"
    lines = [
        f"dataset {dataset!r} needs the file {spec.path!r}, which is missing "
        f"(data directory {data_dir} {where}).",
        f"  expected path:   {target}",
        f"  official source: {spec.url}",
    ]
    if spec.download_url:
        how = {None: "", "gzip": ", then gzip it", "gunzip": ", then gunzip it"}[spec.transform]
        lines.append(f"  direct download: {spec.download_url}{how}")
    if spec.source:
        lines.append(f"  stored copy:     {spec.source}")
    lines.append(
        "To fix: set the environment variable PRIVPUB_DATA_DIR (or pass data_dir=..., "
        "Hydra: data_dir=...) to a directory that holds the file at that relative path"
    )
    if spec.download_url:
        lines[-1] += ", or pass allow_download=True (Hydra: allow_download=true) to fetch it."
    else:
        lines[-1] += (
            "; there is no direct download for this exact file, so obtain it from the "
            "official source (or the stored copy above) and place it at the expected path."
        )
    return "\n".join(lines)


def _download(spec: FileSpec, target: Path) -> None:
    """Fetch ``spec.download_url`` with pooch, apply ``spec.transform``, move to ``target``."""
    import pooch

    target.parent.mkdir(parents=True, exist_ok=True)
    if spec.transform is None:
        known = spec.sha256
    elif spec.transform == "gzip":
        known = spec.content_sha256
    else:  # gunzip: the hash of the compressed download is not known; verified afterwards
        known = None
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".privpub-download-") as tmp:
        try:
            fetched = Path(
                pooch.retrieve(
                    spec.download_url,
                    known_hash=f"sha256:{known}" if known else None,
                    fname="download",
                    path=tmp,
                    progressbar=False,
                )
            )
        except Exception as exc:  # network errors, HTTP errors, pooch's hash mismatch
            raise DataError(
                f"could not download {spec.download_url} for {spec.path!r}: {exc}"
            ) from exc
        result = Path(tmp) / "result"
        if spec.transform == "gzip":
            with open(fetched, "rb") as src, gzip.GzipFile(
                result, "wb", compresslevel=9, mtime=0
            ) as dst:
                shutil.copyfileobj(src, dst)
        elif spec.transform == "gunzip":
            with gzip.open(fetched, "rb") as src, open(result, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            result = fetched
        try:
            verify_file(result, spec)
        except DataError as exc:
            raise DataError(f"downloaded {spec.download_url}, but: {exc}") from None
        os.replace(result, target)


def ensure_file(
    spec: FileSpec,
    *,
    data_dir: str | os.PathLike | None = None,
    allow_download: bool = False,
    dataset: str = "",
) -> Path:
    """Path of a verified copy of ``spec`` in the data directory.

    Parameters
    ----------
    spec : FileSpec
    data_dir : str or path-like, optional
        See :func:`resolve_data_dir`.
    allow_download : bool
        Fetch a missing file from ``spec.download_url`` (with pooch) instead of failing.
    dataset : str
        Dataset name, for messages.

    Raises
    ------
    DataError
        If the file is missing (and cannot or may not be downloaded) or corrupt.
    """
    root = resolve_data_dir(data_dir)
    target = root / spec.path
    if not target.is_file():
        if not (allow_download and spec.download_url):
            raise DataError(_missing_message(spec, target, root, dataset or spec.path))
        _download(spec, target)
    verify_file(target, spec)
    return target
