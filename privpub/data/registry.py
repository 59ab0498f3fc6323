"""The dataset registry and :func:`load_dataset`, the one way experiments obtain data.

Each dataset is a :class:`DatasetSpec`: its name (also its Hydra option name,
``conf/dataset/<name>.yaml``), kind, description, files (for real data) or generator (for
synthetic data), default options and the counts the tests check. Real-data loaders are
called as ``loader(paths, **options)`` with the verified file paths in the order of
``spec.files``; generators as ``loader(rng=rng, **options)``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scipy.sparse as sp

from privpub.data.files import FileSpec, ensure_file
from privpub.errors import PrivpubError, UnknownNameError
from privpub.types import Graph, Kind, Table
from privpub.validation import check_rng

__all__ = [
    "DatasetSpec",
    "register_dataset",
    "dataset_names",
    "get_dataset_spec",
    "dataset_files",
    "load_dataset",
]


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
        synthetic data.
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

    def __post_init__(self):
        if self.kind not in (Kind.GRAPH, Kind.TABLE, Kind.BINARY_MATRIX):
            raise PrivpubError(f"dataset {self.name!r}: unsupported kind {self.kind!r}")
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise PrivpubError(f"dataset name {self.name!r} must be lowercase_with_underscores")
        if self.synthetic == bool(self.files):
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


def dataset_names() -> list[str]:
    """Names of all registered datasets, sorted."""
    return sorted(_DATASETS)


def get_dataset_spec(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` registered as ``name``.

    Raises
    ------
    UnknownNameError
        If ``name`` is not registered; the message lists the known names.
    """
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
        Registry name; see :func:`dataset_names`.
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
    spec = get_dataset_spec(name)
    opts = _options(spec, options)
    if spec.synthetic:
        out = spec.loader(rng=check_rng(rng), **opts)
    else:
        paths = dataset_files(name, data_dir=data_dir, allow_download=allow_download)
        out = spec.loader(paths, **opts)
    if isinstance(out, Graph) and out.name != spec.name:
        out = dataclasses.replace(out, name=spec.name)
    return out
