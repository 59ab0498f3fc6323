"""The dK-2 series of a graph (its joint degree matrix, JDM) and what is read off it.

A :class:`~privpub.types.JointDegree` stores ``e[l, h]``, the number of *edges* between
degree-``l`` and degree-``h`` nodes, for ``l <= h``, one cell per pair, in the beta order of
sala2011 Definition 3. networkx's joint-degree dictionary stores ``jd[k][l] = e[k, l]`` for
``k != l`` and ``jd[k][k] = 2 e[k, k]`` (stubs, hence always even). The degree-``k`` stub total
is ``s_k = sum_{l != k} e[k, l] + 2 e[k, k]`` and the number of degree-``k`` nodes is
``n_k = s_k / k``. How the dK-2 steps of sala2011 fit together: docs/design.md (sala2011).

References
----------
.. [SZWZZ11] A. Sala, X. Zhao, C. Wilson, H. Zheng, B. Y. Zhao. Sharing graphs using
   differentially private graph models. IMC 2011, Sec 3.1 and Definition 3.
.. [MKFV06] P. Mahadevan, D. Krioukov, K. Fall, A. Vahdat. Systematic topology analysis and
   generation using degree correlations. SIGCOMM 2006.
"""

from __future__ import annotations

import weakref

import numpy as np

from privpub.cache import register_clear
from privpub.errors import PrivpubError
from privpub.types import Graph, JointDegree

__all__ = [
    "check_graph",
    "joint_degree",
    "beta_order",
    "stub_totals",
    "node_counts",
    "is_realizable",
    "to_networkx_dict",
    "from_networkx_dict",
    "dk2_l1",
    "dk2_euclidean",
]


def check_graph(graph, who: str = "a dK-2 mechanism") -> Graph:
    """``graph`` itself if it is a :class:`~privpub.types.Graph`, else a
    :class:`~privpub.errors.PrivpubError` saying that ``who`` needs one."""
    if not isinstance(graph, Graph):
        raise PrivpubError(f"{who} needs a Graph, got {type(graph).__name__}")
    return graph


#: joint_degree's cells per graph object, while it lives: a graph is immutable, and the
#: trials of a worker release from one dataset object (sala2011's DRC, LDRC and dK-PA).
#: Emptied by :func:`privpub.cache.cold` (running-time experiments).
_SERIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
register_clear(_SERIES.clear)


def joint_degree(graph: Graph) -> JointDegree:
    """The dK-2 series of ``graph``: for every unordered pair of endpoint degrees
    ``(l <= h)`` the number of edges joining such nodes (sala2011 Sec 3.1), beta-ordered.

    Isolated nodes appear in no cell. Vectorised: O(m log m), once per graph object (each
    call returns its own copy).
    """
    check_graph(graph, "joint_degree")
    cells = _SERIES.get(graph)
    if cells is None:
        jd = _joint_degree(graph)
        cells = _SERIES[graph] = (jd.low, jd.high, jd.counts)
    return JointDegree(*(a.copy() for a in cells))


def _joint_degree(graph: Graph) -> JointDegree:
    deg = graph.degrees()
    edges = graph.edges()
    if edges.size == 0:
        return JointDegree(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    a, b = deg[edges[:, 0]], deg[edges[:, 1]]
    low, high = np.minimum(a, b), np.maximum(a, b)
    base = int(high.max()) + 1
    keys, counts = np.unique(high * base + low, return_counts=True)  # sorted: beta order
    return JointDegree(keys % base, keys // base, counts.astype(float))


def beta_order(low, high) -> np.ndarray:
    """Indices sorting cells in the beta order of sala2011 Definition 3: by the larger degree
    (``max(d_x, d_y)``), ties by the smaller one. Depends on the cells' degrees only."""
    low = np.asarray(low, dtype=np.int64)
    high = np.asarray(high, dtype=np.int64)
    return np.lexsort((low, high))


def stub_totals(jd: JointDegree) -> np.ndarray:
    """``s[k]``: stubs of degree-``k`` nodes implied by the counts (index 0 unused)."""
    top = int(jd.high.max(initial=0))
    s = np.zeros(top + 1)
    np.add.at(s, jd.low, jd.counts)
    np.add.at(s, jd.high, jd.counts)  # a diagonal cell adds its count twice: 2 e[k, k]
    return s


def node_counts(jd: JointDegree) -> np.ndarray:
    """``n[k] = s[k] / k``, the implied number of degree-``k`` nodes (index 0 is 0)."""
    s = stub_totals(jd)
    n = np.zeros_like(s)
    n[1:] = s[1:] / np.arange(1, s.size)
    return n


def is_realizable(jd: JointDegree) -> bool:
    """Whether ``jd`` is the JDM of some simple graph.

    The conditions (Stanton & Pinar 2012; Czabarka et al. 2015): every ``e`` a non-negative
    integer, every ``n_k`` an integer, ``e[k, l] <= n_k n_l`` (``k != l``) and ``e[k, k] <=
    n_k (n_k - 1) / 2``; exactly those of ``networkx.is_valid_joint_degree`` on
    :func:`to_networkx_dict`.
    """
    c = jd.counts
    if c.size == 0:
        return True
    if np.any(c < 0) or np.any(c != np.round(c)):
        return False
    n = node_counts(jd)
    if np.any(np.abs(n - np.round(n)) > 1e-9):
        return False
    n = np.round(n)
    diag = jd.low == jd.high
    cap = np.where(diag, n[jd.low] * (n[jd.low] - 1) / 2, n[jd.low] * n[jd.high])
    return bool(np.all(c <= cap))


def to_networkx_dict(jd: JointDegree) -> dict:
    """The networkx joint-degree dictionary of an integer JDM (diagonal = 2 e[k, k])."""
    out: dict[int, dict[int, int]] = {}
    for lo, hi, c in zip(jd.low.tolist(), jd.high.tolist(), jd.counts.tolist(), strict=True):
        c = int(round(c))
        if c == 0:
            continue
        if lo == hi:
            out.setdefault(lo, {})[lo] = 2 * c
        else:
            out.setdefault(lo, {})[hi] = c
            out.setdefault(hi, {})[lo] = c
    return out


def from_networkx_dict(d: dict) -> JointDegree:
    """Inverse of :func:`to_networkx_dict`."""
    cells = {}
    for k, row in d.items():
        for j, v in row.items():
            if v:
                lo, hi = min(k, j), max(k, j)
                cells[(lo, hi)] = v / 2 if lo == hi else v
    if not cells:
        return JointDegree(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    keys = np.array(list(cells), dtype=np.int64)
    return JointDegree(keys[:, 0], keys[:, 1], np.array(list(cells.values()), dtype=float))


def _dense_pair(a: JointDegree, b: JointDegree):
    top = int(max(a.high.max(initial=0), b.high.max(initial=0))) + 1
    ka, kb = a.high * top + a.low, b.high * top + b.low
    keys = np.union1d(ka, kb)
    va = np.zeros(keys.size)
    vb = np.zeros(keys.size)
    va[np.searchsorted(keys, ka)] = a.counts
    vb[np.searchsorted(keys, kb)] = b.counts
    return va, vb


def dk2_euclidean(a: JointDegree, b: JointDegree) -> float:
    """Euclidean distance between two dK-2 series over the union of their cells (a cell
    one of them does not list counts 0) -- sala2011 Figs 3-4's error measure."""
    va, vb = _dense_pair(a, b)
    return float(np.sqrt(np.sum((va - vb) ** 2)))


def dk2_l1(a: JointDegree, b: JointDegree) -> float:
    """L1 distance between two dK-2 series over the union of their cells."""
    va, vb = _dense_pair(a, b)
    return float(np.sum(np.abs(va - vb)))

