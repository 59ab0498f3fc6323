"""The data layer: a registry of real and synthetic datasets, their loaders and generators.

Real datasets are read from a data directory (``data_dir``, else ``$PRIVPUB_DATA_DIR``,
else ``pooch.os_cache("privpub")``), hash-checked, and never downloaded unless
``allow_download=True``. Synthetic datasets are generated from an explicit
``numpy.random.Generator``.

Examples
--------
>>> from privpub.data import dataset_names, get_dataset_spec, load_dataset
>>> get_dataset_spec("wiki_vote").defaults
{'lcc': False, 'loop_nodes': False}
>>> load_dataset("karate").n_edges
78

Modules
-------
- :mod:`privpub.data.registry`  :class:`DatasetSpec`, :func:`load_dataset`
- :mod:`privpub.data.files`     data directory, file specs, hashing, downloads
- :mod:`privpub.data.readers`   edge list / MatrixMarket / Graphs.jl LG / MATLAB readers
- :mod:`privpub.data.edge_stream` large edge lists, streamed; the memory check
- :mod:`privpub.data.graphs`    real graphs (SNAP, Facebook100, CAIDA, MUSAE, SuiteSparse, PGB)
- :mod:`privpub.data.tables`    real tables (UCI Adult, NLTCS, ACS, Google Play)
- :mod:`privpub.data.binary`    binary-matrix views for epasto2022
- :mod:`privpub.data.synthetic` generators (Gaussians, bipartite SBM, Chung-Lu, networkx)
"""

# Importing the catalogue modules (graphs, tables, binary, synthetic) registers their datasets.
from privpub.data import samples as _samples  # noqa: E402,F401  (registers <graph>_bfs)
from privpub.data import shaped as _shaped  # noqa: E402,F401  (registers *_like)
from privpub.data.binary import one_hot
from privpub.data.files import ENV_VAR, FileSpec, resolve_data_dir
from privpub.data.graphs import graph_from_edge_list, largest_connected_component
from privpub.data.registry import (
    DatasetSpec,
    FileStatus,
    check_dataset_files,
    dataset_files,
    dataset_names,
    file_status,
    get_dataset_spec,
    load_dataset,
    register_dataset,
)
from privpub.data.synthetic import bipartite_sbm, chung_lu, gaussian_1d, gaussian_mixture
from privpub.data.tables import ADULT_CATEGORICAL, PLAYSTORE_CATEGORICAL

__all__ = [
    "ENV_VAR",
    "FileSpec",
    "DatasetSpec",
    "resolve_data_dir",
    "load_dataset",
    "dataset_names",
    "get_dataset_spec",
    "dataset_files",
    "check_dataset_files",
    "file_status",
    "FileStatus",
    "register_dataset",
    "graph_from_edge_list",
    "largest_connected_component",
    "one_hot",
    "ADULT_CATEGORICAL",
    "PLAYSTORE_CATEGORICAL",
    "gaussian_1d",
    "gaussian_mixture",
    "bipartite_sbm",
    "chung_lu",
]
