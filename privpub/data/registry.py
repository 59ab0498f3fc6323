"""The dataset registry and :func:`load_dataset`, the one way experiments obtain data.

Each dataset is a :class:`DatasetSpec`: its name (also its Hydra option name,
``conf/dataset/<name>.yaml``), kind, description, files (for real data) or generator (for
synthetic data), default options and the counts the tests check. Real-data loaders are
called as ``loader(paths, **options)`` with the verified file paths in the order of
``spec.files``; generators as ``loader(rng=rng, **options)``. An installed distribution adds
datasets through the entry-point group ``privpub.datasets`` (:mod:`privpub.plugins`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scipy.sparse as sp

from privpub.data.files import FileSpec, HashMismatch, check_hash, ensure_file, resolve_data_dir
from privpub.errors import DataError, PrivpubError, UnknownNameError
from privpub.types import Graph, Kind, Table
from privpub.validation import check_rng

__all__ = [
    "DatasetSpec",
    "register_dataset",
    "dataset_names",
    "get_dataset_spec",
    "dataset_files",
    "load_dataset",
    "FileStatus",
    "file_status",
    "check_dataset_files",
    "EDGE_LIST_SUFFIXES",
    "is_file_name",
    "identify_options",
]

#: Names that load as the user's edge-list file (dataset ``edge_list``) in load_dataset.
EDGE_LIST_SUFFIXES = (".txt", ".tsv", ".csv", ".edges", ".el")


@dataclass(frozen=True)
class DatasetSpec:
    """Everything privpub knows about one dataset.

    Attributes
    ----------
    name : str
        Registry name, lowercase_with_underscores (also the Hydra option name).
    kind : str
        A :class:`privpub.types.Kind` value: ``graph``, ``table`` or ``binary_matrix``.
    description : str
        What the data is, where it comes from and which paper uses it.
    synthetic : bool
        True for generated data (no files; seeded by ``rng``).
    files : tuple of FileSpec
        The files a real dataset is read from (relative to the data directory).
    licence : str
        Licence / terms-of-use note.
    expected : dict
        Counts the tests check, e.g. ``n_nodes``, ``n_edges``, ``lcc_nodes``, ``lcc_edges``
        for graphs, ``n_rows``, ``n_cols`` for tables, ``shape``, ``nnz`` for matrices.
    defaults : dict
        The options and their default values (``load_dataset(name, **options)`` accepts
        exactly these keys).
    papers : tuple of str
        Keys of the papers that use the dataset (``day2016``, ``epasto2022``, ...).
    loader : callable
        ``loader(paths, **options)`` for real data, ``loader(rng=..., **options)`` for
        synthetic data, ``loader(**options)`` for a user's file.
    user_file : bool
        Reads the user's file named by its ``path`` option (no registered files, no
        sha256 to check); :func:`identify_options` adds the file's sha256 to the options
        that identify its results.
    """

    name: str
    kind: str
    description: str
    synthetic: bool = False
    files: tuple[FileSpec, ...] = ()
    licence: str = ""
    expected: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    papers: tuple[str, ...] = ()
    loader: Callable | None = field(default=None, repr=False, compare=False)
    user_file: bool = False

    def __post_init__(self):
        if self.kind not in (Kind.GRAPH, Kind.TABLE, Kind.BINARY_MATRIX):
            raise PrivpubError(f"dataset {self.name!r}: unsupported kind {self.kind!r}")
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise PrivpubError(f"dataset name {self.name!r} must be lowercase_with_underscores")
        if self.user_file:
            if self.synthetic or self.files or not {"path", "sha256"} <= set(self.defaults):
                raise PrivpubError(f"dataset {self.name!r}: a user-file dataset has no "
                                   "registered files and options path and sha256")
        elif self.synthetic == bool(self.files):
            raise PrivpubError(f"dataset {self.name!r}: synthetic datasets have no files, "
                               "real ones need at least one")
        if self.loader is None:
            raise PrivpubError(f"dataset {self.name!r} has no loader")

    @property
    def options(self) -> tuple[str, ...]:
        """Names of the dataset's options (the keys of ``defaults``)."""
        return tuple(self.defaults)


_DATASETS: dict[str, DatasetSpec] = {}


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    """Add ``spec`` to the registry (a name may be registered only once)."""
    if spec.name in _DATASETS and _DATASETS[spec.name] != spec:
        raise PrivpubError(f"dataset name {spec.name!r} registered twice")
    _DATASETS[spec.name] = spec
    return spec


def _load_plugins() -> None:
    """Import the installed dataset plug-ins (entry-point group ``privpub.datasets``: each
    names a module that calls :func:`register_dataset`; :mod:`privpub.plugins`)."""
    from privpub.plugins import load_entry_points

    load_entry_points("dataset")


def dataset_names() -> list[str]:
    """Names of all registered datasets (installed plug-ins included), sorted."""
    _load_plugins()
    return sorted(_DATASETS)


def get_dataset_spec(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` registered as ``name``.

    Raises
    ------
    UnknownNameError
        If ``name`` is not registered; the message lists the known names.
    """
    if isinstance(name, str) and name not in _DATASETS:
        _load_plugins()
    try:
        return _DATASETS[name]
    except (KeyError, TypeError):
        import difflib

        close = difflib.get_close_matches(str(name), list(_DATASETS), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UnknownNameError(
            f"unknown dataset {name!r}.{hint} Known datasets: {', '.join(dataset_names())}"
        ) from None


def _options(spec: DatasetSpec, options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(spec.defaults))
    if unknown:
        valid = ", ".join(f"{k}={v!r}" for k, v in spec.defaults.items()) or "none"
        raise PrivpubError(
            f"dataset {spec.name!r} has no option(s) {', '.join(unknown)}; "
            f"valid options (with defaults): {valid}"
        )
    return {**spec.defaults, **options}


def dataset_files(
    name: str, *, data_dir: str | os.PathLike | None = None, allow_download: bool = False
) -> tuple[Path, ...]:
    """Verified paths of a real dataset's files (downloading them only if allowed).

    Raises
    ------
    DataError
        If a file is missing or corrupt (see :func:`privpub.data.files.ensure_file`).
    """
    spec = get_dataset_spec(name)
    return tuple(
        ensure_file(f, data_dir=data_dir, allow_download=allow_download, dataset=spec.name)
        for f in spec.files
    )


@dataclass(frozen=True)
class FileStatus:
    """The state of one data file in the data directory (see :func:`file_status`).

    Attributes
    ----------
    datasets : tuple of str
        The datasets that read the file (e.g. ``adult`` and ``adult_binary`` share theirs).
    path : str
        Path relative to the data directory.
    expected_path : pathlib.Path
        Where the file is looked for.
    status : str
        ``present`` (sha256 checked), ``missing`` or ``corrupt``.
    url : str
        The publisher's official page or file.
    download_url : str or None
        A direct download of the same bytes or content (None: obtain it by hand).
    size : int
        Expected size in bytes.
    mismatch : HashMismatch or None
        For a corrupt file: the expected and the actual sha256.
    spec : FileSpec
        The file's spec (for :func:`privpub.data.files.ensure_file`).
    """

    datasets: tuple[str, ...]
    path: str
    expected_path: Path
    status: str
    url: str
    download_url: str | None
    size: int
    mismatch: HashMismatch | None = None
    spec: FileSpec | None = field(default=None, repr=False, compare=False)

    @property
    def dataset(self) -> str:
        """The dataset name(s), comma-separated."""
        return ", ".join(self.datasets)

    @property
    def ok(self) -> bool:
        return self.status == "present"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for ``privpub data --json``)."""
        out = {
            "datasets": list(self.datasets),
            "path": self.path,
            "expected_path": str(self.expected_path),
            "status": self.status,
            "url": self.url,
            "download_url": self.download_url,
            "size": self.size,
        }
        if self.mismatch is not None:
            out["expected_sha256"] = self.mismatch.expected
            out["actual_sha256"] = self.mismatch.actual
        return out


def _real_files(names) -> dict[str, tuple[FileSpec, list[str]]]:
    """{relative path: (spec, [datasets])} of the real datasets among ``names``, in order."""
    files: dict[str, tuple[FileSpec, list[str]]] = {}
    for name in names:
        spec = get_dataset_spec(name)
        if spec.synthetic:
            continue
        for f in spec.files:
            entry = files.setdefault(f.path, (f, []))
            if spec.name not in entry[1]:
                entry[1].append(spec.name)
    return files


def _status(f: FileSpec, datasets, root: Path) -> FileStatus:
    target = root / f.path
    if not target.is_file():
        status, mismatch = "missing", None
    else:
        mismatch = check_hash(target, f)
        status = "present" if mismatch is None else "corrupt"
    return FileStatus(tuple(sorted(datasets)), f.path, target, status, f.url, f.download_url,
                      f.size, mismatch, f)


def file_status(
    names=None, *, data_dir: str | os.PathLike | None = None
) -> list[FileStatus]:
    """The state of every file of the real datasets among ``names`` (never raises for data).

    Parameters
    ----------
    names : iterable of str, optional
        Dataset names; default every registered dataset. Synthetic ones have no files.
    data_dir : str or path-like, optional
        See :func:`privpub.data.resolve_data_dir`.

    Returns
    -------
    list of FileStatus
        One per distinct file (a file shared by several datasets is listed once), in the
        order of ``names`` (sorted when not given). Present files are sha256-checked.

    Raises
    ------
    UnknownNameError
        For a name that is not a registered dataset.
    """
    root = resolve_data_dir(data_dir)
    names = dataset_names() if names is None else list(names)
    return [_status(f, ds, root) for f, ds in _real_files(names).values()]


def _problem_lines(st: FileStatus, error: str | None = None) -> list[str]:
    what = "MISSING" if st.status == "missing" else "CORRUPT"
    lines = [
        f"  - {st.path}  [{what}]  (dataset{'s' if len(st.datasets) > 1 else ''} "
        f"{st.dataset})",
        f"      expected path:   {st.expected_path}",
    ]
    if st.mismatch is not None:
        m = st.mismatch
        lines.append(f"      expected sha256: {m.expected}")
        lines.append(f"      actual sha256:   {m.actual}  ({m.size:,} bytes; expected "
                     f"{st.size:,})")
        if m.content_expected:
            lines.append(f"      (uncompressed content: expected sha256 {m.content_expected}, "
                         f"got {m.content_actual})")
    lines.append(f"      official source: {st.url}")
    if st.download_url:
        how = {None: "", "gzip": ", then gzip it", "gunzip": ", then gunzip it"}[
            st.spec.transform if st.spec is not None else None
        ]
        lines.append(f"      direct download: {st.download_url}{how}")
    else:
        lines.append("      direct download: none (obtain it from the official source)")
    if st.spec is not None and st.spec.source:
        lines.append(f"      stored copy:     {st.spec.source}")
    if error:
        lines.append(f"      download failed: {error}")
    return lines


def check_dataset_files(
    names,
    *,
    data_dir: str | os.PathLike | None = None,
    allow_download: bool = False,
) -> None:
    """Check every file of the real datasets among ``names``; report all problems at once.

    Synthetic datasets need nothing and are not checked. With ``allow_download``, missing
    files that have a direct download URL are fetched (hash-checked) first.

    Parameters
    ----------
    names : iterable of str
        Dataset names (duplicates are fine).
    data_dir : str or path-like, optional
        See :func:`privpub.data.resolve_data_dir`.
    allow_download : bool
        Fetch missing files from their ``download_url`` (with pooch) instead of failing.

    Raises
    ------
    DataError
        One error naming *every* missing or corrupt file: its dataset(s), relative path,
        expected absolute path, official URL, direct download URL when known and, for a
        corrupt file, the expected and actual sha256; then one "To fix:" paragraph.
    UnknownNameError
        For a name that is not a registered dataset.
    """
    root = resolve_data_dir(data_dir)
    problems = _file_problems(list(dict.fromkeys(names)), root, allow_download)
    if problems:
        raise DataError(_problems_report(problems, root))


def _file_problems(names, root: Path, allow_download: bool) -> list[tuple[FileStatus, str | None]]:
    """``(status, download error)`` of every missing or corrupt file of ``names``, after
    fetching the missing ones that can be when ``allow_download``."""
    problems: list[tuple[FileStatus, str | None]] = []
    for f, datasets in _real_files(names).values():
        st = _status(f, datasets, root)
        error = None
        if st.status == "missing" and allow_download and f.download_url:
            try:
                ensure_file(f, data_dir=root, allow_download=True, dataset=datasets[0])
                continue
            except DataError as exc:
                error = str(exc)
                st = _status(f, datasets, root)
                if st.ok:
                    continue
        if not st.ok:
            problems.append((st, error))
    return problems


def _problems_report(problems: list[tuple[FileStatus, str | None]], root: Path) -> str:
    """The message of :func:`check_dataset_files`: a head line, every file's lines, then
    one "To fix:" paragraph."""
    n_missing = sum(st.status == "missing" for st, _ in problems)
    n_corrupt = len(problems) - n_missing
    counts = " and ".join(
        t for t in (f"{n_missing} missing" if n_missing else "",
                    f"{n_corrupt} corrupt" if n_corrupt else "") if t
    )
    datasets = sorted({d for st, _ in problems for d in st.datasets})
    where = "" if root.is_dir() else " (it does not exist)"
    lines = [
        f"{counts} data file(s) for dataset(s) {', '.join(datasets)} in data directory "
        f"{root}{where}:"
    ]
    for st, error in problems:
        lines.extend(_problem_lines(st, error))
    lines.append(_how_to_fix([st for st, _ in problems], n_corrupt))
    return "\n".join(lines)


def _how_to_fix(problems: list[FileStatus], n_corrupt: int) -> str:
    fetchable = [st.path for st in problems if st.download_url]
    manual = [st.path for st in problems if not st.download_url]
    fix = [
        "To fix: set the environment variable PRIVPUB_DATA_DIR (or pass data_dir=..., Hydra: "
        "data_dir=...) to a directory that holds these files at the relative paths shown."
    ]
    if n_corrupt:
        fix.append("Delete each corrupt file (or replace it with a good copy).")
    if fetchable:
        which = (f"all {len(fetchable)} of them" if len(fetchable) == len(problems) and
                 len(fetchable) > 1 else f"{', '.join(fetchable)}")
        fix.append(
            f"allow_download=True (Hydra: allow_download=true) fetches {which} from the "
            "direct download shown, hash-checked."
        )
    if manual:
        fix.append(
            f"The {len(manual)} file(s) without a direct download ({', '.join(manual)}) must "
            "be obtained from their official source and placed at the expected path."
        )
    fix.append("`privpub data` shows the state of every data file; `privpub data --download` "
               "fetches every file that has a direct download.")
    return " ".join(fix)


def load_dataset(
    name: str,
    *,
    data_dir: str | os.PathLike | None = None,
    rng=None,
    allow_download: bool = False,
    **options,
) -> Graph | Table | sp.csr_array:
    """Load a registered dataset.

    Parameters
    ----------
    name : str
        Registry name; see :func:`dataset_names`. A path to an edge-list file (or a name
        ending ``.txt``, ``.tsv``, ``.csv``, ``.edges``, ``.el``, optionally ``.gz``) loads
        that file as dataset ``edge_list`` (``path=name``).
    data_dir : str or path-like, optional
        Data directory for real datasets; default ``$PRIVPUB_DATA_DIR``, else the user
        cache (:func:`privpub.data.resolve_data_dir`).
    rng : numpy.random.Generator, SeedSequence, int or None
        Seeds synthetic datasets (ignored by real ones).
    allow_download : bool
        Let missing real-data files be downloaded (hash-checked) from their direct URL.
    **options
        Dataset options overriding ``get_dataset_spec(name).defaults``, e.g.
        ``lcc=True`` for graphs, ``split="test"`` for adult, ``n_rows=256`` for
        ``sbm_epasto``.

    Returns
    -------
    Graph, Table or scipy.sparse.csr_array
        According to ``get_dataset_spec(name).kind``; binary matrices are int8 0/1.

    Raises
    ------
    UnknownNameError
        Unknown dataset name (the message lists the known ones).
    PrivpubError
        Unknown option (the message lists the valid ones) or invalid option value.
    DataError
        Missing, corrupt or malformed data file.

    Examples
    --------
    >>> import numpy as np
    >>> g = load_dataset("karate")
    >>> g.n_nodes, g.n_edges
    (34, 78)
    >>> m = load_dataset("sbm_small", rng=np.random.default_rng(0), n_rows=64)
    >>> m.shape
    (64, 128)
    """
    if is_file_name(name):
        name, options = "edge_list", {**options, "path": name}
    spec = get_dataset_spec(name)
    opts = _options(spec, options)
    if spec.synthetic:
        out = spec.loader(rng=check_rng(rng), **opts)
    elif spec.user_file:
        out = spec.loader(**opts)
    else:
        paths = dataset_files(name, data_dir=data_dir, allow_download=allow_download)
        out = spec.loader(paths, **opts)
    if isinstance(out, Graph) and out.name != spec.name and not spec.user_file:
        out = dataclasses.replace(out, name=spec.name)
    return out


def is_file_name(name) -> bool:
    """Whether ``name`` names a file rather than a registered dataset: a path to an
    existing file, or a name with a path separator or an edge-list suffix
    (:data:`EDGE_LIST_SUFFIXES`, optionally ``.gz``); registered names are identifiers."""
    if not isinstance(name, (str, os.PathLike)):
        return False
    text = os.fspath(name)
    if not text or text.isidentifier():
        return False
    bare = text[:-3] if text.endswith(".gz") else text
    return ("/" in text or os.sep in text or bare.lower().endswith(EDGE_LIST_SUFFIXES)
            or Path(text).expanduser().is_file())


def identify_options(spec: DatasetSpec, options: dict[str, Any]) -> dict[str, Any]:
    """The options that identify ``spec``'s data in a result store: for a user file, its
    absolute path and its content's sha256 (so results of a changed file are never mixed
    with those of the old one); other datasets' options as they are. A user file is also
    checked to fit in memory (:func:`privpub.data.edge_stream.check_memory`), so that a run
    stops before its first trial.

    Raises
    ------
    DataError
        The file does not exist, its sha256 differs from a given ``sha256`` option, or its
        load would not fit in the available memory.
    """
    if not spec.user_file:
        return options
    from privpub.data.files import user_file_sha256

    path = options.get("path")
    if not path:
        raise DataError(f"dataset {spec.name!r} needs the path of the file: "
                        f"dataset.path=/path/to/file (or dataset=/path/to/file)")
    from privpub.data.edge_stream import check_memory

    resolved = Path(os.fspath(path)).expanduser().resolve()
    digest = user_file_sha256(resolved, expected=options.get("sha256"))
    check_memory(resolved, lcc=bool(options.get("lcc")))
    return {**options, "path": str(resolved), "sha256": digest}
