"""The dK-2 series (joint degree distribution): extraction, realizability repair, generation.

sala2011 (Pygmalion) turns a graph into its dK-2 series, perturbs it and generates a new
graph from the result. This module holds the three non-private steps every mechanism and
metric shares:

- :func:`joint_degree`: the dK-2 series of a graph, as a :class:`~privpub.types.JointDegree`
  (edge counts per unordered pair of endpoint degrees, in the beta order of sala2011
  Definition 3).
- :func:`repair_joint_degree`: a realizable joint degree matrix (JDM) near a noisy dK-2
  series, computed from the noisy series alone (post-processing).
- :func:`generate_graph`: a random simple graph with exactly that JDM, by networkx's
  ``joint_degree_graph`` (Gjoka et al. 2015; run as a bit-exact compiled port) or a
  compiled balanced stub-matching generator with swap repair for large graphs.

Conventions
-----------
A JDM here stores ``e[l, h]``, the number of *edges* between degree-``l`` and degree-``h``
nodes, for ``l <= h``. networkx's dictionary stores ``jd[k][l] = e[k, l]`` for ``k != l``
and ``jd[k][k] = 2 e[k, k]`` (stubs, hence always even). The degree-``k`` stub total is
``s_k = sum_{l != k} e[k, l] + 2 e[k, k]`` and the number of degree-``k`` nodes is
``n_k = s_k / k``. A JDM is realizable as a simple graph iff every ``e`` is a
non-negative integer, every ``n_k`` is an integer, ``e[k, l] <= n_k n_l`` (``k != l``) and
``e[k, k] <= n_k (n_k - 1) / 2`` (Stanton & Pinar 2012; Czabarka et al. 2015): these are
exactly the conditions of ``networkx.is_valid_joint_degree``.

Repair (:func:`repair_joint_degree`)
------------------------------------
1. Round every noisy count to the nearest integer and clip at 0.
2. Visit degrees ``k = D, D-1, ..., 2`` (``D`` the largest degree listed). When ``k`` is
   visited, every cell ``(k, h)`` with ``h > k`` is final. Choose ``n_k`` as the integer
   nearest ``s_k / k`` but at least ``max_h ceil(e[k, h] / n_h)`` (so those final cells fit),
   clip ``e[k, k]`` to ``n_k (n_k - 1) / 2``, then add or remove the ``|k n_k - s_k|`` missing
   or surplus stubs in the cells ``(l, k)``, ``l < k``, in proportion to their counts
   (largest remainder; removal may also take whole diagonal edges). If removal is impossible
   (too few stubs, or an odd remainder only the diagonal could absorb) ``n_k`` goes up by one.
   If there is no lower cell to add to, the stubs go to ``(1, k)``: they become new leaves.
   Changes to ``(l, k)`` move the imbalance to the smaller degree ``l``, visited later.
3. Degree 1 needs nothing: ``n_1 = s_1``. The result meets every condition above (cells
   ``(1, h)`` always fit: ``e[1, h] <= n_1`` and ``n_h >= 1``).

The repair never reads the original graph; its L1 change is reported by the mechanisms.

Generation (:func:`generate_graph`)
-----------------------------------
- ``networkx``: ``networkx.joint_degree_graph`` (Gjoka et al. 2015), exact. It runs as a
  compiled port (:func:`_joint_degree_graph`) that returns networkx's very graph for the
  same seed -- same nodes, same edges in the same order: it replays CPython's Mersenne
  Twister, set iteration order and dict insertion order; the tests check it against
  networkx, edge list for edge list. 1.2 s instead of 15 s for web-NotreDame's 1.09M edges.
  ``auto`` uses it up to :data:`NETWORKX_MAX_EDGES` edges.
- ``stub_matching`` (compiled, for large graphs): nodes of degree ``k`` get their stubs
  toward each cell ``(k, l)`` round-robin ("balanced", Stanton & Pinar 2012: each node holds
  the floor or ceiling of its share of every cell, which is enough for a simple realization
  to exist). Each cell is then built simple: an off-diagonal cell pairs each node's stubs
  with consecutive, hence distinct, nodes of the other class; a diagonal cell is a
  near-regular degree sequence, built by Havel-Hakimi. JDM-preserving double-edge swaps
  (an endpoint trades places with an endpoint of the same degree: every degree and every
  edge's cell stay the same) then randomise the graph, ``mixing`` attempts per edge. The
  same swaps repair any self-loop or multi-edge; what is still bad after the repair passes
  is dropped (the simplification), counted in ``GenerationReport.dropped``, and the L1
  distance of the result's dK-2 to the target is reported -- 0 in every case the tests and
  benchmarks tried.

References
----------
.. [SZWZZ11] A. Sala, X. Zhao, C. Wilson, H. Zheng, B. Y. Zhao. Sharing graphs using
   differentially private graph models. IMC 2011, Sec 3.1 and Definition 3.
.. [MKFV06] P. Mahadevan, D. Krioukov, K. Fall, A. Vahdat. Systematic topology analysis and
   generation using degree correlations. SIGCOMM 2006.
.. [SP12] I. Stanton, A. Pinar. Constructing and sampling graphs with a prescribed joint
   degree distribution. ACM JEA 17, 2012.
.. [GTM15] M. Gjoka, B. Tillman, A. Markopoulou. Construction of simple graphs with a
   target joint degree matrix and beyond. INFOCOM 2015 (networkx.joint_degree_graph).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from numba import njit

from privpub.errors import PrivpubError
from privpub.types import Graph, JointDegree
from privpub.validation import check_rng

__all__ = [
    "check_graph",
    "joint_degree",
    "beta_order",
    "stub_totals",
    "node_counts",
    "is_realizable",
    "to_networkx_dict",
    "from_networkx_dict",
    "repair_joint_degree",
    "GenerationReport",
    "generate_graph",
    "dk2_l1",
    "dk2_euclidean",
    "GENERATORS",
]

#: Graph generators known to :func:`generate_graph`.
GENERATORS = ("auto", "networkx", "stub_matching")

#: ``auto`` uses networkx up to this many edges, stub matching beyond (kept from when
#: networkx itself ran, so ``auto`` still picks the generator it picked then).
NETWORKX_MAX_EDGES = 2_000_000


# --------------------------------------------------------------------------- extraction
def check_graph(graph, who: str = "a dK-2 mechanism") -> Graph:
    """``graph`` itself if it is a :class:`~privpub.types.Graph`, else a
    :class:`~privpub.errors.PrivpubError` saying that ``who`` needs one."""
    if not isinstance(graph, Graph):
        raise PrivpubError(f"{who} needs a Graph, got {type(graph).__name__}")
    return graph


def joint_degree(graph: Graph) -> JointDegree:
    """The dK-2 series of ``graph``: for every unordered pair of endpoint degrees
    ``(l <= h)`` the number of edges joining such nodes (sala2011 Sec 3.1), beta-ordered.

    Isolated nodes appear in no cell. Vectorised: O(m log m).
    """
    check_graph(graph, "joint_degree")
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
    """Whether ``jd`` is the JDM of some simple graph (the conditions in the module
    docstring, equivalent to ``networkx.is_valid_joint_degree`` on :func:`to_networkx_dict`)."""
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


# --------------------------------------------------------------------------- repair
@njit(cache=True)
def _distribute(amount, weights, out):
    """Split the integer ``amount`` over ``weights`` (>= 0) in proportion, largest
    remainder first; ``out`` receives the integer shares. Equal shares if all weights 0."""
    m = weights.size
    total = 0.0
    for i in range(m):
        total += weights[i]
    if m == 0:
        return
    w = weights.copy()
    if total <= 0:
        for i in range(m):
            w[i] = 1.0
        total = float(m)
    given = 0
    frac = np.empty(m)
    for i in range(m):
        share = amount * w[i] / total
        out[i] = int(np.floor(share))
        frac[i] = share - out[i]
        given += out[i]
    order = np.argsort(-frac)
    j = 0
    while given < amount:
        out[order[j % m]] += 1
        given += 1
        j += 1


@njit(cache=True)
def _repair(low, high, e, top):
    """See the module docstring. ``low``/``high``/``e`` beta-ordered, int64; every row
    ``k >= 2`` has a cell ``(1, k)`` (possibly 0). Modifies ``e``; returns node counts."""
    m = e.size
    s = np.zeros(top + 1, np.int64)
    for i in range(m):
        s[low[i]] += e[i]
        s[high[i]] += e[i]
    # rows by high are contiguous (beta order): row k = [row_start[k], row_start[k + 1])
    row_start = np.searchsorted(high, np.arange(top + 2))
    by_low = np.argsort(low * (top + 1) + high)
    low_start = np.zeros(top + 2, np.int64)
    for i in range(m):
        low_start[low[i] + 1] += 1
    for k in range(top + 1):
        low_start[k + 1] += low_start[k]
    n = np.zeros(top + 1, np.int64)
    for k in range(top, 1, -1):
        # final upper cells (low == k, high > k)
        n_min = 0
        for t in range(low_start[k], low_start[k + 1]):
            i = by_low[t]
            if high[i] > k and e[i] > 0:
                need = (e[i] + n[high[i]] - 1) // n[high[i]]
                if need > n_min:
                    n_min = need
        # the diagonal cell and the lower cells of row k
        diag = -1
        lo_cells = np.empty(row_start[k + 1] - row_start[k], np.int64)
        n_lo = 0
        for i in range(row_start[k], row_start[k + 1]):
            if low[i] == k:
                diag = i
            else:
                lo_cells[n_lo] = i
                n_lo += 1
        lo_cells = lo_cells[:n_lo]
        nk = max(n_min, (2 * s[k] + k) // (2 * k))  # nearest integer to s_k / k
        # lower cells that cannot fit between n_k nodes and the current estimate of n_l
        # nodes are clipped now, so that row l is never forced to grow (no cascade)
        for j in range(n_lo):
            i = lo_cells[j]
            lw = low[i]
            n_est = max(np.int64(1), (2 * s[lw] + lw) // (2 * lw))
            cap = n_est * max(nk, np.int64(1))
            if e[i] > cap:
                s[lw] -= e[i] - cap
                s[k] -= e[i] - cap
                e[i] = cap
        while True:
            if diag >= 0:
                cap = nk * (nk - 1) // 2
                if e[diag] > cap:
                    s[k] -= 2 * (e[diag] - cap)
                    e[diag] = cap
            delta = k * nk - s[k]
            if delta == 0:
                break
            if delta > 0:
                # in proportion to the counts, within each cell's room (n_l estimate x n_k);
                # what does not fit becomes leaves: cell (1, k) always fits (n_1 = s_1)
                room = np.zeros(n_lo, np.int64)
                leaf = -1
                for j in range(n_lo):
                    i = lo_cells[j]
                    lw = low[i]
                    if lw == 1:
                        leaf = j
                    n_est = max(np.int64(1), (2 * s[lw] + lw) // (2 * lw))
                    room[j] = max(np.int64(0), n_est * nk - e[i])
                left = delta
                for _round in range(4):
                    w = np.zeros(n_lo)
                    has_room = False
                    for j in range(n_lo):
                        if room[j] > 0:
                            w[j] = e[lo_cells[j]] + 1e-9
                            has_room = True
                    if not has_room or left == 0:
                        break
                    add = np.zeros(n_lo, np.int64)
                    _distribute(left, w, add)
                    for j in range(n_lo):
                        a = min(add[j], room[j])
                        i = lo_cells[j]
                        e[i] += a
                        s[low[i]] += a
                        room[j] -= a
                        left -= a
                if left > 0:
                    i = lo_cells[leaf]
                    e[i] += left
                    s[1] += left
                s[k] += delta
                break
            # remove r stubs
            r = -delta
            avail = 0
            for j in range(n_lo):
                avail += e[lo_cells[j]]
            from_diag = 0
            if avail < r:
                need = r - avail
                if diag >= 0 and need % 2 == 0 and 2 * e[diag] >= need:
                    from_diag = need // 2
                else:
                    nk += 1
                    continue
            take = r - 2 * from_diag
            w = np.empty(n_lo)
            for j in range(n_lo):
                w[j] = e[lo_cells[j]]
            sub = np.zeros(n_lo, np.int64)
            if take > 0:
                _distribute(take, w, sub)
                # proportional shares never exceed a cell, except by rounding: move excess
                spill = 0
                for j in range(n_lo):
                    over = sub[j] - e[lo_cells[j]]
                    if over > 0:
                        sub[j] -= over
                        spill += over
                j = 0
                while spill > 0:
                    if sub[j] < e[lo_cells[j]]:
                        sub[j] += 1
                        spill -= 1
                    else:
                        j += 1
            for j in range(n_lo):
                i = lo_cells[j]
                e[i] -= sub[j]
                s[low[i]] -= sub[j]
            if from_diag > 0:
                e[diag] -= from_diag
            s[k] -= r
            break
        n[k] = nk
    if top >= 1:
        n[1] = s[1]
    return n


def repair_joint_degree(jd: JointDegree) -> tuple[JointDegree, dict]:
    """A realizable JDM near the (noisy) dK-2 series ``jd``, from ``jd`` alone.

    See the module docstring for the rule. Returns the repaired series (cells with a
    positive count, beta-ordered) and a report: ``l1`` (L1 change from the rounded, clipped
    input), ``l1_from_input`` (from the raw input), ``nodes`` and ``edges`` of the result.
    """
    if not isinstance(jd, JointDegree):
        raise PrivpubError(f"repair_joint_degree needs a JointDegree, got {type(jd).__name__}")
    if not np.all(np.isfinite(jd.counts)):
        raise PrivpubError("a dK-2 series to repair must be finite")
    e0 = np.clip(np.rint(jd.counts), 0, None).astype(np.int64)
    keep = e0 > 0
    low, high, e = jd.low[keep], jd.high[keep], e0[keep]
    top = int(high.max(initial=0))
    # every row k >= 2 gets a (1, k) cell, where stubs can always be added
    extra = np.setdiff1d(np.arange(2, top + 1), high[low == 1])
    low = np.concatenate([low, np.ones(extra.size, np.int64)])
    high = np.concatenate([high, extra])
    e = np.concatenate([e, np.zeros(extra.size, np.int64)])
    order = beta_order(low, high)
    low, high, e = low[order], high[order], e[order].copy()
    start = e.copy()
    n = _repair(low, high, e, top) if top >= 1 else np.zeros(1, np.int64)
    keep = e > 0
    out = JointDegree(low[keep], high[keep], e[keep].astype(float))
    info = {
        "l1": float(np.abs(e - start).sum()),
        "l1_from_input": dk2_l1(jd, out),
        "nodes": float(n[1:].sum()),
        "edges": float(e.sum()),
    }
    return out, info


# --------------------------------------------------------------------------- hash multiset
_EMPTY = np.int64(-1)


@njit(cache=True)
def _hs_new(n_items):
    """An empty hash multiset for up to ``n_items`` keys: ``(keys, counts, bits)``, tables
    of ``2**bits >= 2 n_items + 16`` slots (open addressing, linear probing)."""
    bits = 4
    while (np.int64(1) << bits) < 2 * n_items + 16:
        bits += 1
    return (np.full(np.int64(1) << bits, _EMPTY, np.int64),
            np.zeros(np.int64(1) << bits, np.int32), bits)


@njit(cache=True, inline="always")
def _slot(key, bits):
    x = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64(x >> np.uint64(64 - bits))


@njit(cache=True)
def _hs_find(keys, key, bits):
    mask = (np.int64(1) << bits) - 1
    i = _slot(key, bits)
    while keys[i] != key and keys[i] != -1:
        i = (i + 1) & mask
    return i


@njit(cache=True)
def _hs_add(keys, cnt, key, bits):
    i = _hs_find(keys, key, bits)
    if keys[i] == -1:
        keys[i] = key
        cnt[i] = 1
    else:
        cnt[i] += 1


@njit(cache=True)
def _hs_count(keys, cnt, key, bits):
    i = _hs_find(keys, key, bits)
    return 0 if keys[i] == -1 else cnt[i]


@njit(cache=True)
def _hs_remove(keys, cnt, key, bits):
    """Remove one copy of ``key`` (which must be present); backward-shift deletion."""
    mask = (np.int64(1) << bits) - 1
    i = _hs_find(keys, key, bits)
    cnt[i] -= 1
    if cnt[i] > 0:
        return
    j = i
    while True:
        j = (j + 1) & mask
        if keys[j] == -1:
            break
        h = _slot(keys[j], bits)
        if i <= j:
            stay = i < h <= j
        else:
            stay = h > i or h <= j
        if stay:
            continue
        keys[i] = keys[j]
        cnt[i] = cnt[j]
        i = j
    keys[i] = -1
    cnt[i] = 0


@njit(cache=True, inline="always")
def _key(u, v, n):
    return u * n + v if u < v else v * n + u


# --------------------------------------------------------------------------- generator
@njit(cache=True)
def _slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits, n_nodes, rng):
    """Try one JDM-preserving swap on edge ``t``: its endpoint on ``side`` (``v``, kept
    partner ``u``) trades places with the endpoint ``y`` of a random slot of the same degree
    class, on edge ``j = (x, y)``: ``(u, v), (x, y) -> (u, y), (x, v)``. Every node keeps its
    degree and every edge its cell. Done only if both new edges are new and not loops."""
    if side == 0:
        v, u = U[t], V[t]
    else:
        u, v = U[t], V[t]
    c = deg_of[v]
    lo, hi = class_ptr[c], class_ptr[c + 1]
    if hi - lo < 2:
        return False
    s = slots[lo + rng.integers(0, hi - lo)]
    j = s >> 1
    if j == t:
        return False
    if s & 1:
        y, x = V[j], U[j]
    else:
        y, x = U[j], V[j]
    if u == y or x == v or y == v:
        return False
    k1 = _key(u, y, n_nodes)
    k2 = _key(x, v, n_nodes)
    if k1 == k2 or _hs_count(keys, cnts, k1, bits) > 0 or _hs_count(keys, cnts, k2, bits) > 0:
        return False
    _hs_remove(keys, cnts, _key(u, v, n_nodes), bits)
    _hs_remove(keys, cnts, _key(x, y, n_nodes), bits)
    _hs_add(keys, cnts, k1, bits)
    _hs_add(keys, cnts, k2, bits)
    if side == 0:
        U[t] = y
    else:
        V[t] = y
    if s & 1:
        V[j] = v
    else:
        U[j] = v
    return True


@njit(cache=True)
def _havel_hakimi(rem, base, U, V, start, rng):
    """Havel-Hakimi on degrees ``rem`` of nodes ``base + i``; writes ``sum(rem) / 2`` edges
    from index ``start`` of ``U``/``V``.

    Nodes are kept sorted by remaining degree in buckets (the Batagelj-Zaversnik layout), so
    the construction is O(n + m); ties are broken by an initial random order. Should the
    sequence not be graphical, the stubs left over are paired as they come (possibly into
    loops or multi-edges), for the caller's repair and simplification."""
    n = rem.size
    total = 0
    top = 0
    for i in range(n):
        total += rem[i]
        if rem[i] > top:
            top = rem[i]
    n_edges = total // 2
    perm = rng.permutation(n)
    count = np.zeros(top + 1, np.int64)
    for i in range(n):
        count[rem[i]] += 1
    bin_start = np.zeros(top + 1, np.int64)  # ascending layout: bucket d from bin_start[d]
    for d in range(1, top + 1):
        bin_start[d] = bin_start[d - 1] + count[d - 1]
    order = np.empty(n, np.int64)
    pos = np.empty(n, np.int64)
    fill = bin_start.copy()
    for q in range(n):
        i = perm[q]
        order[fill[rem[i]]] = i
        pos[i] = fill[rem[i]]
        fill[rem[i]] += 1
    left = np.zeros(n, np.int64)  # stubs that found no partner
    written = start
    hi = n - 1  # the active nodes are order[0..hi]
    while hi >= 0 and rem[order[hi]] > 0:
        u = order[hi]
        r = rem[u]
        hi -= 1  # u (largest remaining degree, last in the layout) leaves
        rem[u] = 0
        take = min(r, hi + 1)
        partners = order[hi + 1 - take:hi + 1].copy()
        placed = 0
        for j in range(take):
            v = partners[j]
            d = rem[v]
            if d == 0:
                continue
            U[written] = base + u
            V[written] = base + v
            written += 1
            placed += 1
            w = order[bin_start[d]]  # decrement v: swap it to the front of its bucket
            pv, pw = pos[v], pos[w]
            order[pv] = w
            order[pw] = v
            pos[v] = pw
            pos[w] = pv
            bin_start[d] += 1
            rem[v] = d - 1
        left[u] += r - placed
    for i in range(n):
        left[i] += rem[i]
    i = 0
    while written < start + n_edges:
        while left[i] == 0:
            i += 1
        left[i] -= 1
        j = i
        while left[j] == 0:
            j += 1
        left[j] -= 1
        U[written] = base + i
        V[written] = base + j
        written += 1


@njit(cache=True)
def _stub_match(low, high, e, n_of, rng, repair_passes, tries, mixing):
    top = n_of.size - 1
    offset = np.zeros(top + 2, np.int64)
    for k in range(1, top + 1):
        offset[k + 1] = offset[k] + n_of[k]
    n_nodes = offset[top + 1]
    m = e.size
    eoff = np.zeros(m + 1, np.int64)
    for c in range(m):
        eoff[c + 1] = eoff[c] + e[c]
    n_edges = eoff[m]
    U = np.empty(n_edges, np.int64)
    V = np.empty(n_edges, np.int64)
    # stub demands per class, dealt round-robin over the class's nodes, cells in random order
    ptr = np.zeros(top + 1, np.int64)
    for k in range(1, top + 1):
        if n_of[k] > 0:
            ptr[k] = rng.integers(0, n_of[k])
    corder = rng.permutation(m)
    for q in range(m):
        c = corder[q]
        lo, hi, cnt = low[c], high[c], e[c]
        if cnt == 0:
            continue
        if lo == hi:
            # a near-regular degree sequence inside the class: Havel-Hakimi builds a simple
            # graph with it (it is graphical: even sum, max <= n - 1)
            nk = n_of[lo]
            rem = np.zeros(nk, np.int64)
            for _ in range(2 * cnt):
                rem[ptr[lo] % nk] += 1
                ptr[lo] += 1
            _havel_hakimi(rem, offset[lo], U, V, eoff[c], rng)
        else:
            # left stubs grouped by node, right stubs in cyclic dealing order: a node with
            # a <= ceil(e / n_lo) <= n_hi stubs meets a consecutive, distinct right nodes,
            # so the cell starts simple (randomness comes from the mixing swaps)
            nl, nh = n_of[lo], n_of[hi]
            left = np.empty(cnt, np.int64)
            for t in range(cnt):
                left[t] = offset[lo] + (ptr[lo] % nl)
                ptr[lo] += 1
                V[eoff[c] + t] = offset[hi] + (ptr[hi] % nh)
                ptr[hi] += 1
            left.sort()
            for t in range(cnt):
                U[eoff[c] + t] = left[t]
    # hash multiset of edges
    keys, cnts, bits = _hs_new(n_edges)
    for t in range(n_edges):
        _hs_add(keys, cnts, _key(U[t], V[t], n_nodes), bits)
    # slots (edge, side) grouped by the degree class of their endpoint; a swap moves nodes
    # between slots of one class only, so this grouping never changes
    deg_of = np.empty(n_nodes, np.int64)
    for k in range(1, top + 1):
        for v in range(offset[k], offset[k + 1]):
            deg_of[v] = k
    class_ptr = np.zeros(top + 2, np.int64)
    for t in range(n_edges):
        class_ptr[deg_of[U[t]] + 1] += 1
        class_ptr[deg_of[V[t]] + 1] += 1
    for k in range(top + 1):
        class_ptr[k + 1] += class_ptr[k]
    fill = class_ptr[:-1].copy()
    slots = np.empty(2 * n_edges, np.int64)  # 2 * edge + side (0: U, 1: V)
    for t in range(n_edges):
        cu = deg_of[U[t]]
        slots[fill[cu]] = 2 * t
        fill[cu] += 1
        cv = deg_of[V[t]]
        slots[fill[cv]] = 2 * t + 1
        fill[cv] += 1
    # repair: a bad edge swaps one endpoint with a same-degree endpoint of any other edge
    for _pass in range(repair_passes):
        bad = 0
        for t in range(n_edges):
            if U[t] != V[t] and _hs_count(keys, cnts, _key(U[t], V[t], n_nodes), bits) == 1:
                continue
            done = False
            for _try in range(tries):
                side = rng.integers(0, 2)
                if _slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits,
                              n_nodes, rng):
                    done = True
                    break
            if not done:
                bad += 1
        if bad == 0:
            break
    # mixing: the same JDM-preserving swap between random simple edges
    attempts = mixing * n_edges
    accepted = 0
    if n_edges > 1:
        for _a in range(attempts):
            t = rng.integers(0, n_edges)
            if U[t] == V[t] or _hs_count(keys, cnts, _key(U[t], V[t], n_nodes), bits) != 1:
                continue
            side = rng.integers(0, 2)
            if _slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits, n_nodes,
                          rng):
                accepted += 1
    # simplification: drop loops and extra copies
    keep = np.ones(n_edges, np.bool_)
    dropped = 0
    for t in range(n_edges):
        u, v = U[t], V[t]
        if u == v:
            keep[t] = False
            dropped += 1
            continue
        k = _key(u, v, n_nodes)
        i = _hs_find(keys, k, bits)
        if cnts[i] > 1:
            cnts[i] -= 1
            keep[t] = False
            dropped += 1
    return U[keep], V[keep], n_nodes, dropped, accepted


# --------------------------------------------------------------------------- networkx port
# A compiled port of ``networkx.joint_degree_graph`` (networkx 3.x,
# ``networkx/generators/joint_degree_seq.py``; the algorithm of Gjoka et al. 2015, [GTM15])
# that returns exactly networkx's graph for the same integer seed, edge order included.
# networkx spends its time on Python objects: mostly rebuilding the unsaturated-node sets for
# every cell and ``next(iter(unsat))`` on sets emptied by removals (CPython rescans the dummy
# slots from the start each time). Three pieces of CPython state decide the result and are
# reproduced:
#
# - ``random.Random(seed)``: MT19937 (``Modules/_randommodule.c``, ``genrand_uint32``)
#   started from ``getstate()``; ``randrange(n)`` is ``_randbelow_with_getrandbits``.
# - the iteration order of the unsaturated-node sets ``{v for v in nodes if r[v] > 0}``
#   (``Objects/setobject.c``: ``set_add_entry``, ``set_table_resize``,
#   ``set_insert_clean``). networkx only removes from these sets after building them, and
#   a removal leaves a dummy in place without resizing, so ``next(iter(s))`` is the first
#   element of the build-time slot order still present; a union-find over the positions
#   finds it in near-constant time.
# - the insertion order of the adjacency dicts (``Graph.add_edge`` appends, ``remove_edge``
#   deletes, a re-added edge goes to the end): per-node doubly linked lists of half-edges,
#   with edge membership in the hash set above.

_MT_N = 624
_MT_M = 397
_PYSET_MINSIZE = 8  # PySet_MINSIZE
_PYSET_LINEAR_PROBES = 9  # LINEAR_PROBES
_PYSET_PERTURB_SHIFT = 5  # PERTURB_SHIFT


def _mt_state(seed: int) -> np.ndarray:
    """MT19937 state of ``random.Random(seed)``.

    Parameters
    ----------
    seed : int

    Returns
    -------
    numpy.ndarray
        625 int64: the 624 state words, then the position of the next word (624 for a fresh
        seed: the first draw twists).
    """
    _version, internal, _gauss = random.Random(seed).getstate()
    return np.array(internal, dtype=np.int64)


@njit(cache=True)
def _mt_next(st):
    """Next 32-bit output of CPython's MT19937 (``genrand_uint32``), advancing ``st``.

    Parameters
    ----------
    st : numpy.ndarray
        State from :func:`_mt_state` (int64 words below ``2**32``), updated in place.

    Returns
    -------
    int
        ``random.Random.getrandbits(32)`` of the same state.
    """
    if st[_MT_N] >= _MT_N:
        for kk in range(_MT_N):  # the three loops of the twist, with indices mod N
            y = (st[kk] & 0x80000000) | (st[(kk + 1) % _MT_N] & 0x7FFFFFFF)
            st[kk] = st[(kk + _MT_M) % _MT_N] ^ (y >> 1) ^ (0x9908B0DF * (y & 1))
        st[_MT_N] = 0
    y = st[st[_MT_N]]
    st[_MT_N] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y


@njit(cache=True)
def _randbelow(st, n):
    """``random.Random.randrange(n)`` for ``0 < n < 2**32`` (``_randbelow_with_getrandbits``:
    ``k = n.bit_length()``, then ``getrandbits(k)``, one word shifted right by ``32 - k``,
    until it is below ``n``)."""
    k = 0
    m = n
    while m:
        k += 1
        m >>= 1
    r = _mt_next(st) >> (32 - k)
    while r >= n:
        r = _mt_next(st) >> (32 - k)
    return r


@njit(cache=True, inline="always")
def _pyset_free_slot(table, mask, key):
    """Slot CPython's set gives a new int ``key`` (``hash(key) == key``) in a table without
    dummies: the first empty slot of its probe sequence, ``LINEAR_PROBES`` neighbours at a
    time, then ``i = (5 i + 1 + perturb) & mask`` (``set_add_entry``, ``set_insert_clean``)."""
    perturb = key
    i = key & mask
    while True:
        probes = _PYSET_LINEAR_PROBES if i + _PYSET_LINEAR_PROBES <= mask else 0
        for j in range(i, i + probes + 1):
            if table[j] < 0:
                return j
        perturb >>= _PYSET_PERTURB_SHIFT
        i = (i * 5 + 1 + perturb) & mask


@njit(cache=True, inline="always")
def _pyset_resized(used):
    """Table size after the resize that ``used`` elements (no dummies) trigger:
    ``set_table_resize(used > 50000 ? 2 used : 4 used)``, the smallest power of two above."""
    minused = used * 2 if used > 50000 else used * 4
    size = _PYSET_MINSIZE
    while size <= minused:
        size <<= 1
    return size


@njit(cache=True)
def _pyset_order(elems, out, tabs):
    """Iteration order of the CPython 3.11 set built by adding ``elems`` one by one.

    Parameters
    ----------
    elems : numpy.ndarray
        Distinct non-negative ints, in the order a set display or comprehension adds them.
    out : numpy.ndarray
        Receives ``list(the set)`` in its first ``elems.size`` entries.
    tabs : numpy.ndarray
        Scratch, shape ``(2, T)`` with ``T >= 8 * elems.size + 8`` (the largest table).

    Returns
    -------
    int
        ``elems.size``.

    Notes
    -----
    ``set_add_entry`` resizes once ``fill * 5 >= mask * 3``, to the smallest power of two
    above ``4 used`` (``2 used`` past 50000 elements), re-inserting the old table's slots in
    order with ``set_insert_clean``; iteration walks the slots in order. Shortcut: when the
    elements ascend and span at most the final table size, every element ends in its home
    slot ``x & mask`` (no two homes coincide, so no element is ever displaced), and the
    order is the ascending list rotated to start at the first home.
    """
    m = elems.size
    mask = _PYSET_MINSIZE - 1
    while True:  # the final table size depends on m alone (no dummies: fill == used)
        fill = (mask * 3 + 4) // 5  # the first fill that triggers a resize
        if fill > m:
            break
        mask = _pyset_resized(fill) - 1
    fast = m == 0 or elems[m - 1] - elems[0] <= mask
    for j in range(1, m):
        if not fast:
            break
        fast = elems[j] > elems[j - 1]
    if fast:
        if m == 0:
            return 0
        wrap = (elems[0] | mask) + 1  # elements from here have homes below elems[0]'s
        j = 0
        while j < m and elems[j] < wrap:
            j += 1
        out[: m - j] = elems[j:]
        out[m - j : m] = elems[:j]
        return m
    cur = 0
    mask = _PYSET_MINSIZE - 1
    tabs[cur, : mask + 1] = -1
    fill = 0
    for x in elems:
        table = tabs[cur]
        table[_pyset_free_slot(table, mask, x)] = x
        fill += 1
        if fill * 5 >= mask * 3:
            size = _pyset_resized(fill)
            new = tabs[1 - cur]
            new[:size] = -1
            for j in range(mask + 1):
                if table[j] >= 0:
                    new[_pyset_free_slot(new, size - 1, table[j])] = table[j]
            cur = 1 - cur
            mask = size - 1
    table = tabs[cur]
    m = 0
    for j in range(mask + 1):
        if table[j] >= 0:
            out[m] = table[j]
            m += 1
    return m


@njit(cache=True)
def _unsat_build(start, size, residual, elems, order, parent, pos, tabs):
    """networkx's ``{v for v in range(start, start + size) if residual[v] > 0}``.

    The set is ``order[:m]`` (its iteration order, ``order[m] = -1``) with a union-find
    ``parent`` over the positions (``find(p)``: first present position ``>= p``; ``m`` when
    none is left); ``pos[v]`` is ``v``'s position, -1 for the class's nodes outside the set.
    ``elems`` is scratch of at least ``size`` entries.
    """
    m = 0
    for v in range(start, start + size):
        pos[v] = -1
        if residual[v] > 0:
            elems[m] = v
            m += 1
    _pyset_order(elems[:m], order, tabs)
    for p in range(m):
        pos[order[p]] = p
        parent[p] = p
    order[m] = -1
    parent[m] = m


@njit(cache=True, inline="always")
def _unsat_find(parent, p):
    """First position ``>= p`` still in the set (path halving)."""
    while parent[p] != p:
        parent[p] = parent[parent[p]]
        p = parent[p]
    return p


@njit(cache=True, inline="always")
def _unsat_discard(parent, pos, v):
    """``set.discard(v)``: the slot keeps its place (a dummy), the iteration skips it."""
    p = pos[v]
    if p >= 0 and parent[p] == p:
        parent[p] = p + 1


@njit(cache=True, inline="always")
def _adj_append(u, x, h, tgt, nxt, prv, head, tail):
    """Append half-edge ``h`` (``u -> x``) at the end of ``u``'s adjacency (``adj[u][x] = d``)."""
    tgt[h] = x
    nxt[h] = -1
    prv[h] = tail[u]
    if tail[u] >= 0:
        nxt[tail[u]] = h
    else:
        head[u] = h
    tail[u] = h


@njit(cache=True, inline="always")
def _adj_unlink(u, h, nxt, prv, head, tail):
    """Remove half-edge ``h`` from ``u``'s adjacency (``del adj[u][x]``)."""
    if prv[h] >= 0:
        nxt[prv[h]] = nxt[h]
    else:
        head[u] = nxt[h]
    if nxt[h] >= 0:
        prv[nxt[h]] = prv[h]
    else:
        tail[u] = prv[h]


@njit(cache=True)
def _jdg_add_edge(u, v, tgt, nxt, prv, head, tail, free, ctr, keys, cnts, bits, n_nodes):
    """``G.add_edge(u, v)`` for an absent edge: half-edges ``2 p`` (in ``u``'s list) and
    ``2 p + 1`` (in ``v``'s list) of a free pair ``p``."""
    if ctr[0] > 0:
        ctr[0] -= 1
        p = free[ctr[0]]
    else:
        p = ctr[1]
        ctr[1] += 1
    _adj_append(u, v, 2 * p, tgt, nxt, prv, head, tail)
    _adj_append(v, u, 2 * p + 1, tgt, nxt, prv, head, tail)
    _hs_add(keys, cnts, _key(u, v, n_nodes), bits)


@njit(cache=True)
def _jdg_switch(w, order, parent, pos, avoid, residual, tgt, nxt, prv, head, tail, free, ctr,
                keys, cnts, bits, n_nodes):
    """networkx's ``_neighbor_switch(G, w, unsat, h_node_residual, avoid_node_id)``.

    ``w_prime`` is the set's first element (not ``avoid`` when ``avoid >= 0`` has one free
    stub left); the first neighbour of ``w`` in adjacency order that is neither ``w_prime``
    nor adjacent to it moves from ``w`` to ``w_prime``.
    """
    p = _unsat_find(parent, 0)
    if avoid >= 0 and residual[avoid] <= 1 and order[p] == avoid:
        p = _unsat_find(parent, p + 1)
    wp = order[p]
    if wp < 0:
        raise ValueError("joint_degree_graph: no unsaturated node for a neighbour switch")
    h = head[w]
    while h >= 0:
        x = tgt[h]
        if x != wp and _hs_count(keys, cnts, _key(wp, x, n_nodes), bits) == 0:
            break
        h = nxt[h]
    if h < 0:
        raise ValueError("joint_degree_graph: no neighbour to switch")
    x = tgt[h]
    _adj_unlink(w, h, nxt, prv, head, tail)
    _adj_unlink(x, h ^ 1, nxt, prv, head, tail)
    _hs_remove(keys, cnts, _key(w, x, n_nodes), bits)
    free[ctr[0]] = h >> 1
    ctr[0] += 1
    _jdg_add_edge(wp, x, tgt, nxt, prv, head, tail, free, ctr, keys, cnts, bits, n_nodes)
    residual[w] += 1
    residual[wp] -= 1
    if residual[wp] == 0:
        parent[p] = p + 1  # unsat.remove(w_prime)


@njit(cache=True)
def _jdg_core(cls_start, cls_size, cls_deg, cell_k, cell_l, cell_n, st):
    """The construction loop of ``networkx.joint_degree_graph`` (see :func:`_joint_degree_graph`).

    Returns
    -------
    (numpy.ndarray, int, int)
        ``list(G.edges())`` as an ``(E, 2)`` array, the number of nodes, and the number of
        neighbour switches made.
    """
    n_nodes = 0
    big = 1
    for c in range(cls_size.size):
        n_nodes += cls_size[c]
        big = max(big, cls_size[c])
    n_edges = 0
    for c in range(cell_n.size):
        n_edges += cell_n[c]
    residual = np.empty(n_nodes, np.int64)
    for c in range(cls_size.size):
        residual[cls_start[c] : cls_start[c] + cls_size[c]] = cls_deg[c]
    # adjacency (never more than n_edges edges at once) and edge membership
    cap = max(n_edges, 1)
    tgt = np.empty(2 * cap, np.int64)
    nxt = np.empty(2 * cap, np.int64)
    prv = np.empty(2 * cap, np.int64)
    head = np.full(n_nodes, -1, np.int64)
    tail = np.full(n_nodes, -1, np.int64)
    free = np.empty(cap, np.int64)
    ctr = np.zeros(2, np.int64)  # free pairs, pairs ever used
    keys, cnts, bits = _hs_new(n_edges)
    # the unsaturated sets k_unsat (a) and l_unsat (b)
    pos = np.full(n_nodes, -1, np.int64)
    elems = np.empty(big, np.int64)
    tabs = np.empty((2, 8 * big + 8), np.int64)
    order_a = np.empty(big + 1, np.int64)
    parent_a = np.empty(big + 1, np.int64)
    order_b = np.empty(big + 1, np.int64)
    parent_b = np.empty(big + 1, np.int64)
    switches = 0
    for c in range(cell_n.size):
        ck, cl = cell_k[c], cell_l[c]
        ks, kn, ls, ln = cls_start[ck], cls_size[ck], cls_start[cl], cls_size[cl]
        _unsat_build(ks, kn, residual, elems, order_a, parent_a, pos, tabs)
        if ck != cl:
            _unsat_build(ls, ln, residual, elems, order_b, parent_b, pos, tabs)
            order_l, parent_l = order_b, parent_b
        else:
            order_l, parent_l = order_a, parent_a  # l_unsat is k_unsat
        n_add = cell_n[c]
        while n_add > 0:
            v = ks + _randbelow(st, kn)
            w = ls + _randbelow(st, ln)
            if v == w or _hs_count(keys, cnts, _key(v, w, n_nodes), bits) != 0:
                continue
            if residual[v] == 0:
                _jdg_switch(v, order_a, parent_a, pos, -1, residual, tgt, nxt, prv, head, tail,
                            free, ctr, keys, cnts, bits, n_nodes)
                switches += 1
            if residual[w] == 0:
                _jdg_switch(w, order_l, parent_l, pos, -1 if ck != cl else v, residual, tgt,
                            nxt, prv, head, tail, free, ctr, keys, cnts, bits, n_nodes)
                switches += 1
            _jdg_add_edge(v, w, tgt, nxt, prv, head, tail, free, ctr, keys, cnts, bits, n_nodes)
            residual[v] -= 1
            residual[w] -= 1
            n_add -= 1
            if residual[v] == 0:
                _unsat_discard(parent_a, pos, v)
            if residual[w] == 0:
                _unsat_discard(parent_l, pos, w)
    # list(G.edges()): nodes in order, each with its later neighbours in adjacency order
    edges = np.empty((n_edges, 2), np.int64)
    t = 0
    for u in range(n_nodes):
        h = head[u]
        while h >= 0:
            if tgt[h] > u:
                edges[t, 0] = u
                edges[t, 1] = tgt[h]
                t += 1
            h = nxt[h]
    return edges[:t], n_nodes, switches


def _joint_degree_graph(joint_degrees: dict, seed: int) -> tuple[np.ndarray, int, int]:
    """``networkx.joint_degree_graph(joint_degrees, seed=seed)``, compiled and bit-exact.

    Parameters
    ----------
    joint_degrees : dict
        A valid networkx joint-degree dictionary (:func:`to_networkx_dict` of a JDM that
        passes :func:`is_realizable`); its iteration order matters, as in networkx.
    seed : int
        The integer seed networkx would get (``random.Random(seed)``).

    Returns
    -------
    edges : numpy.ndarray
        ``(E, 2)`` int64, ``list(G.edges())`` of networkx's graph, in the same order.
    n_nodes : int
        ``G.number_of_nodes()``.
    switches : int
        Neighbour switches made (Gjoka et al. 2015), for tests.

    Notes
    -----
    Node ids go to degree classes in the order of the dictionary's keys and the cells are
    visited in its order, exactly as in networkx; the tests compare the full edge lists with
    networkx's on many inputs and seeds. Exactness rests on CPython's ``random`` and ``set``
    internals (as of 3.11, the project's interpreter) and on networkx 3.x's algorithm; the
    same tests would catch a change in either.
    """
    degree_count = {k: sum(row.values()) // k for k, row in joint_degrees.items() if k > 0}
    cls = {}
    start, size, deg = [], [], []
    node = 0
    for k, count in degree_count.items():
        cls[k] = len(start)
        start.append(node)
        size.append(count)
        deg.append(k)
        node += count
    if max(size, default=0) >= 2**32:
        raise PrivpubError("joint_degree_graph port: a degree class has 2**32 nodes or more")
    cell_k, cell_l, cell_n = [], [], []
    for k, row in joint_degrees.items():
        for j, n_add in row.items():
            if n_add > 0 and k >= j:
                cell_k.append(cls[k])
                cell_l.append(cls[j])
                cell_n.append(n_add // 2 if k == j else n_add)

    def arr(x):
        return np.array(x, dtype=np.int64)

    edges, n_nodes, switches = _jdg_core(arr(start), arr(size), arr(deg), arr(cell_k),
                                         arr(cell_l), arr(cell_n), _mt_state(int(seed)))
    return edges, int(n_nodes), int(switches)


@dataclass(frozen=True)
class GenerationReport:
    """What :func:`generate_graph` did.

    Attributes
    ----------
    generator : str
        ``networkx`` or ``stub_matching``.
    dropped : int
        Edges removed by the final simplification (0: the target JDM is met exactly).
    l1_to_target : float
        L1 distance between the generated graph's dK-2 series and the target.
    swaps : int
        Accepted mixing swaps (stub matching only).
    """

    generator: str
    dropped: int
    l1_to_target: float
    swaps: int = 0


def generate_graph(
    jd: JointDegree,
    *,
    rng: np.random.Generator,
    generator: str = "auto",
    mixing: int = 5,
    repair_passes: int = 20,
    name: str = "",
) -> tuple[Graph, GenerationReport]:
    """A random simple graph whose dK-2 series is the realizable JDM ``jd``.

    Parameters
    ----------
    jd : JointDegree
        Must satisfy :func:`is_realizable` (use :func:`repair_joint_degree` first).
    rng : numpy.random.Generator
    generator : {"auto", "networkx", "stub_matching"}
        ``networkx``: ``networkx.joint_degree_graph`` (Gjoka et al. 2015) through its
        bit-exact compiled port :func:`_joint_degree_graph` (the same graph as networkx for
        the same seed, edge order included; verified against networkx by the tests).
        ``auto``: networkx up to :data:`NETWORKX_MAX_EDGES` (2 million) edges, else stub
        matching (the limit dates from networkx's own memory use and is kept so that
        ``auto`` makes the same choice as before).
    mixing : int
        Stub matching: JDM-preserving swap attempts per edge after the repair.
    repair_passes : int
        Stub matching: passes over the bad edges before dropping what is left.

    Returns
    -------
    (Graph, GenerationReport)
        Nodes are relabelled by a random permutation, so node ids carry no degree order.
    """
    rng = check_rng(rng)
    if generator not in GENERATORS:
        raise PrivpubError(f"generator must be one of {GENERATORS}, got {generator!r}")
    if not isinstance(jd, JointDegree):
        raise PrivpubError(f"generate_graph needs a JointDegree, got {type(jd).__name__}")
    if not is_realizable(jd):
        raise PrivpubError("the JDM is not realizable; repair it with repair_joint_degree")
    e = np.rint(jd.counts).astype(np.int64)
    n_edges = int(e.sum())
    if generator == "auto":
        generator = "networkx" if n_edges <= NETWORKX_MAX_EDGES else "stub_matching"
    n_of = np.rint(node_counts(jd)).astype(np.int64)
    if n_edges == 0:
        graph = Graph.from_edges(np.empty((0, 2), np.int64), 0, name=name)
        return graph, GenerationReport(generator, 0, 0.0)
    if generator == "networkx":
        # the compiled port: networkx's graph for this seed, edge for edge
        edges, n, _ = _joint_degree_graph(to_networkx_dict(jd), int(rng.integers(2**31 - 1)))
        dropped, swaps = 0, 0
    else:
        u, v, n, dropped, swaps = _stub_match(
            jd.low, jd.high, e, n_of, rng, int(repair_passes), 50, int(mixing)
        )
        edges = np.column_stack([u, v])
    perm = rng.permutation(n)
    graph = Graph.from_edges(perm[edges], int(n), name=name)
    report = GenerationReport(generator, int(dropped), dk2_l1(joint_degree(graph), jd), int(swaps))
    return graph, report
