"""Large synthetic graphs shaped like SNAP's social networks, built once and memory-mapped.

``livejournal_like`` and ``orkut_like`` have exactly the node count, edge count and maximum
degree of SNAP's com-LiveJournal and com-Orkut, and a heavy-tailed degree sequence. They are
generated from a ``seed`` option (not from the trial's seed: each is one fixed graph, so it is
built once), stored as an int32 CSR in the compute cache (:func:`privpub.cache.cache_dir`)
and read back memory-mapped: a second load costs milliseconds and no private memory for the
indices, and every worker process shares the page cache.

The construction (:func:`privpub.data.shaped_build.shaped_graph`) is the erased
configuration model on a target degree sequence followed by an exact repair; the design
note is in docs/design.md ("Graphs of today's size").

References
----------
.. [SNAP] J. Leskovec, A. Krevl. SNAP Datasets: Stanford Large Network Dataset Collection
   (com-LiveJournal: 3,997,962 nodes, 34,681,189 edges; com-Orkut: 3,072,441 nodes,
   117,185,083 edges). https://snap.stanford.edu/data/
.. [CL02] F. Chung, L. Lu. Connected components in random graphs with given expected
   degree sequences. Annals of Combinatorics 6, 2002.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from privpub.cache import cache_dir
from privpub.data.registry import DatasetSpec, register_dataset
from privpub.errors import DataError, PrivpubError
from privpub.types import Graph, Kind

__all__ = ["GraphShape", "SHAPES", "DEFAULT_EXPONENT", "load_shaped", "build_info", "csr_graph"]


@dataclass(frozen=True)
class GraphShape:
    """The counts a shaped graph matches exactly.

    Parameters
    ----------
    name : str
        Dataset name.
    n_nodes, n_edges, max_degree : int
        The SNAP graph's counts [SNAP].
    source : str
        Which graph the counts are from.
    """

    name: str
    n_nodes: int
    n_edges: int
    max_degree: int
    source: str

    def scaled(self, fraction: float, exponent: float) -> GraphShape:
        """The same shape at ``fraction`` of the nodes and edges (the average degree kept),
        the maximum degree scaled as a power-law sample's, by ``fraction ** (1 / (exponent -
        1))``: a smaller graph to measure a method on before the full one."""
        if fraction == 1:
            return self
        n = round(self.n_nodes * fraction)
        return GraphShape(self.name, n, round(self.n_edges * fraction),
                          min(n - 1, round(self.max_degree * fraction ** (1 / (exponent - 1)))),
                          f"{self.source} at {fraction:g} of its size")


SHAPES = {
    "livejournal_like": GraphShape("livejournal_like", 3_997_962, 34_681_189, 14_815,
                                   "SNAP com-LiveJournal"),
    "orkut_like": GraphShape("orkut_like", 3_072_441, 117_185_083, 33_313, "SNAP com-Orkut"),
}

#: Default power-law exponent of the expected degrees (the Chung-Lu tail [CL02]).
DEFAULT_EXPONENT = 2.3


def csr_graph(indptr: np.ndarray, indices: np.ndarray, *, name: str = "") -> Graph:
    """A :class:`Graph` on a symmetric CSR with sorted rows and no diagonal (as
    :func:`shaped_graph` builds), without copying ``indptr`` and ``indices`` (they may be
    memory-mapped)."""
    n = indptr.size - 1
    adj = sp.csr_array((np.ones(indices.size, dtype=bool), indices, indptr), shape=(n, n),
                       copy=False)
    adj.has_sorted_indices = True
    adj.has_canonical_format = True
    return Graph(adj, name=name)


# --------------------------------------------------------------------------- the cache
def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _entry(shape: GraphShape, seed: int, exponent: float) -> str:
    """The cache folder's name: the shape, seed, exponent and the code that builds it."""
    code = hashlib.sha256()
    for module in ("shaped.py", "shaped_build.py"):
        code.update((Path(__file__).parent / module).read_bytes())
    ident = json.dumps({"shape": shape.__dict__, "seed": seed, "exponent": exponent,
                        "code": code.hexdigest()[:16]}, sort_keys=True)
    return f"{shape.name}-{hashlib.sha256(ident.encode()).hexdigest()[:16]}"


def _shape(name: str, seed, exponent, fraction) -> tuple[GraphShape, int, float]:
    """The checked options: the (scaled) shape, the seed and the exponent."""
    seed, exponent, fraction = int(seed), float(exponent), float(fraction)
    if seed < 0:
        raise PrivpubError(f"seed must be >= 0, got {seed}")
    if not exponent > 2:
        raise PrivpubError(f"exponent must be > 2, got {exponent}")
    if not 0 < fraction <= 1:
        raise PrivpubError(f"fraction must be in (0, 1], got {fraction}")
    shape = SHAPES[name].scaled(fraction, exponent)
    if shape.n_nodes < 10:
        raise PrivpubError(f"fraction {fraction} leaves {shape.n_nodes} nodes; use a larger one")
    return shape, seed, exponent


def load_shaped(name: str, *, seed: int = 0, exponent: float = DEFAULT_EXPONENT,
                fraction: float = 1.0, rng=None, progress: bool = True) -> Graph:
    """The shaped graph ``name`` (a key of :data:`SHAPES`), built on first use and cached.

    Parameters
    ----------
    name : str
    seed : int
        Fixes the graph (the trial's ``rng`` is ignored: a shaped graph is a dataset, not a
        sample).
    exponent : float
        Power-law exponent of the expected degrees, > 2.
    fraction : float
        In ``(0, 1]``: the same shape on this fraction of the nodes and edges
        (:meth:`GraphShape.scaled`), to measure a method before the full size.
    rng : ignored
    progress : bool
        Say on stderr that a graph is being built, and its time and memory when done.

    Returns
    -------
    Graph
        With memory-mapped int32 ``indptr`` and ``indices`` when the cache is on
        (``PRIVPUB_CACHE_DIR`` not ``off``). ``build.json`` beside them records the build's
        wall and CPU seconds and the building process's peak resident memory.
    """
    del rng
    shape, seed, exponent = _shape(name, seed, exponent, fraction)
    root = cache_dir()
    folder = root / "graphs" / _entry(shape, seed, exponent) if root is not None else None
    if folder is not None and (folder / "build.json").exists():
        try:
            indptr = np.load(folder / "indptr.npy", mmap_mode="r")
            indices = np.load(folder / "indices.npy", mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise DataError(f"cached graph {folder} is unreadable ({exc}); delete the "
                            "folder to rebuild it") from None
        return csr_graph(indptr, indices, name=name)
    if progress:
        print(f"[privpub] building {name} ({shape.n_nodes:,} nodes, {shape.n_edges:,} "
              f"edges; once, then cached)", file=sys.stderr, flush=True)
    from privpub.data.shaped_build import shaped_graph

    wall, cpu = time.perf_counter(), time.process_time()
    indptr, indices = shaped_graph(shape.n_nodes, shape.n_edges, shape.max_degree,
                                   exponent=exponent, rng=np.random.default_rng(seed))
    build = {"seconds": round(time.perf_counter() - wall, 2),
             "cpu_seconds": round(time.process_time() - cpu, 2),
             "process_peak_mb": round(_peak_rss_mb(), 1),
             "n_nodes": shape.n_nodes, "n_edges": shape.n_edges,
             "max_degree": shape.max_degree, "seed": seed, "exponent": exponent}
    if progress:
        print(f"[privpub] built {name} in {build['seconds']} s (peak RSS "
              f"{build['process_peak_mb']:.0f} MB)", file=sys.stderr, flush=True)
    if folder is not None:
        try:
            tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}")
            tmp.mkdir(parents=True)
            np.save(tmp / "indptr.npy", indptr)
            np.save(tmp / "indices.npy", indices)
            (tmp / "build.json").write_text(json.dumps(build, indent=1))
            os.replace(tmp, folder)
            return load_shaped(name, seed=seed, exponent=exponent, fraction=fraction,
                               progress=False)
        except OSError:  # another process won the race, or a read-only cache
            shutil.rmtree(tmp, ignore_errors=True)
            if (folder / "build.json").exists():
                return load_shaped(name, seed=seed, exponent=exponent, fraction=fraction,
                                   progress=False)
    return csr_graph(indptr, indices, name=name)


def build_info(name: str, *, seed: int = 0, exponent: float = DEFAULT_EXPONENT,
               fraction: float = 1.0) -> dict | None:
    """The cached build's ``build.json`` (time and memory of its generation), or None."""
    root = cache_dir()
    if root is None:
        return None
    shape, seed, exponent = _shape(name, seed, exponent, fraction)
    path = root / "graphs" / _entry(shape, seed, exponent) / "build.json"
    return json.loads(path.read_text()) if path.exists() else None


for _like in SHAPES.values():
    register_dataset(DatasetSpec(
        name=_like.name,
        kind=Kind.GRAPH,
        description=(
            f"Synthetic graph shaped like {_like.source}: exactly {_like.n_nodes:,} nodes, "
            f"{_like.n_edges:,} edges and maximum degree {_like.max_degree:,}, power-law "
            "expected degrees (exponent 2.3) realised by the erased configuration model and "
            "an exact repair. One fixed graph per `seed`, built on first use (minutes) and "
            "memory-mapped from the compute cache after."
        ),
        synthetic=True,
        licence="Generated (counts from SNAP's published statistics).",
        expected={"n_nodes": _like.n_nodes, "n_edges": _like.n_edges},
        defaults={"seed": 0, "exponent": DEFAULT_EXPONENT, "fraction": 1.0},
        loader=lambda rng, _name=_like.name, **opts: load_shaped(_name, rng=rng, **opts),
    ))
