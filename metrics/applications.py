"""Application-level metrics of sala2011 Sec 5.2: Reliable Email and influence maximisation.

Each metric describes the *release* (a graph); the truth is only type-checked. Each returns
a curve as a dict ``{x: value}``, stored as rows ``<metric>/<x>`` (x = number of
compromised nodes, or of seeds).

Reliable Email (``reliable_email``)
-----------------------------------
RE (Garriss et al., NSDI 2006) whitelists mail from a user's friends and friends of
friends. sala2011 Fig 8 shows "the portion of the nodes flooded with spam as we increase
the number of malicious spammers": ``k`` compromised nodes, drawn uniformly at random, can
reach every node within two hops; the value is the share of the ``n - k`` other nodes
reached, averaged over :data:`RE_RUNS` draws; ``k`` runs over
:data:`RE_COMPROMISED` (capped at ``n``).

Influence maximisation (``influence_ic``, ``influence_wc``, ``influence_lt``)
----------------------------------------------------------------------------
Seeds: Degree Discount (Chen, Wang & Yang, KDD 2009, Algorithm 4 "DegreeDiscountIC", with
``p = 0.01``): repeatedly take the node of largest discounted degree ``dd_v = d_v - 2 t_v -
(d_v - t_v) t_v p`` (``t_v`` = already chosen neighbours). The first ``k`` of one run are the
``k`` seeds (the greedy order is nested). Spread: the expected number of nodes active at the
end (seeds included), by :data:`MC_RUNS` Monte Carlo runs (compiled, numba) of

- IC, independent cascade with ``p = 0.01`` on every edge (Chen et al.'s setting);
- WC, weighted cascade: ``u`` activates ``v`` with probability ``1 / deg(v)``;
- LT, linear threshold: weights ``1 / deg(v)`` on ``v``'s edges, thresholds uniform in
  [0, 1] drawn per run.

``k`` runs over :data:`SEEDS`. Each run draws a live-edge graph, whose reach from the seeds
has the distribution of the process's final active set (Kempe, Kleinberg & Tardos, KDD
2003: Claim 2.3 for IC and WC, Theorem 2.5 for LT), and grows its seed set through
:data:`SEEDS` (:func:`_cascade_curve`): the points of a curve share their runs, and each is
a mean of :data:`MC_RUNS` independent cascades from its seeds.

Deviation metrics (``reliable_email_deviation``, ``influence_deviation_{ic,wc,lt}``) compare
the release's curve with the truth's: the largest relative gap ``|ours(k) / truth(k) - 1|``
over the curve's points (for RE, from :data:`RE_DEVIATION_MIN_K` compromised nodes on; for
influence, the numbers of seeds below both graphs' node counts). The truth's curve is
computed once per process with seed 0. A deviation metric draws from its curve metric's
random stream (``register_metric(stream=...)``), so the release's curve it compares is the
very curve the curve metric stores, computed once per release (:func:`_release_curve`).

Where the paper is silent (the 2-hop rule, the range of ``k``, the parameters, taken from
the KDD 2009 paper since sala2011's code is not available): docs/design.md (sala2011) and
the notes of ``conf/experiment/sala2011_fig8.yaml`` and ``sala2011_fig9.yaml``.

References
----------
.. [GKF06] S. Garriss, M. Kaminsky, M. J. Freedman, B. Karp, D. Mazieres, H. Yu. RE:
   Reliable email. NSDI 2006.
.. [CWY09] W. Chen, Y. Wang, S. Yang. Efficient influence maximization in social networks.
   KDD 2009.
.. [SZWZZ11] A. Sala et al. Sharing graphs using differentially private graph models.
   IMC 2011, Sec 5.2, Figs 8-9.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from privpub.metrics._checks import same_type
from privpub.metrics._memo import memo, stream_key
from privpub.registry import register_metric
from privpub.types import Graph, Kind
from privpub.validation import check_rng

__all__ = [
    "RE_COMPROMISED",
    "RE_RUNS",
    "RE_DEVIATION_MIN_K",
    "SEEDS",
    "MC_RUNS",
    "IC_PROBABILITY",
    "reliable_email",
    "reliable_email_curve",
    "reliable_email_deviation",
    "influence_curve",
    "influence_deviation_ic",
    "influence_deviation_wc",
    "influence_deviation_lt",
    "degree_discount_seeds",
    "spread",
    "influence_ic",
    "influence_wc",
    "influence_lt",
]

#: Numbers of compromised nodes of the Reliable Email curve.
RE_COMPROMISED = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
#: Random draws of the compromised set per point.
RE_RUNS = 200
#: ``reliable_email_deviation`` compares the curves from this many compromised nodes on:
#: with few, a draw that hits a hub's neighbour reaches a large share, so the point is too
#: noisy (python -m privpub.probes.sala2011, AS, 200 draws, 10 seeds: the mean moves by up to
#: 28% / 12% / 5.2% at k = 1 / 2 / 5, 3.2% at k = 10 and < 1% from k = 20).
RE_DEVIATION_MIN_K = 10
#: Numbers of seeds of the influence curves.
SEEDS = (1, 5, 10, 20, 30, 40, 50)
#: Monte Carlo runs per point of the influence curves.
MC_RUNS = 500
#: Propagation probability of IC and of Degree Discount (Chen et al. 2009).
IC_PROBABILITY = 0.01



def _release(truth, release, metric) -> Graph:
    same_type(truth, release, (Graph,), metric)
    return release


def _rng(rng) -> np.random.Generator:
    """The stream of the release's curve: the runner's, or seed 0 when none is given."""
    return check_rng(rng if rng is not None else 0)


def _release_curve(graph: Graph, key: str, rng: np.random.Generator, curve) -> np.ndarray:
    """``curve(graph, rng)``, remembered per graph, ``key`` and the generator's starting
    state: a metric and its deviation get equal generators (one stream), so the second one
    reads what the first computed. A pure speed-up: the value does not depend on which of
    the two, or whether both, a run computes."""
    return memo(graph, (key, stream_key(rng)), lambda: curve(graph, rng))


def _csr(graph: Graph):
    adj = graph.adjacency
    return adj.indptr.astype(np.int64), adj.indices.astype(np.int64)


# --------------------------------------------------------------------------- Reliable Email
@njit(cache=True)
def _two_hop_growth(indptr, indices, order, ks, n):
    """Share of the non-compromised nodes within 2 hops of the first k nodes of ``order``,
    for each k in ``ks`` (increasing)."""
    reached = np.zeros(n, np.bool_)
    expanded = np.zeros(n, np.bool_)  # neighbours already all reached: O(m) per draw
    bad = np.zeros(n, np.bool_)
    count = 0  # reached and not compromised
    out = np.zeros(ks.size)
    j = 0
    for i in range(ks.size):
        while j < ks[i]:
            s = order[j]
            j += 1
            if not bad[s]:
                bad[s] = True
                if reached[s]:
                    count -= 1
            for p in range(indptr[s], indptr[s + 1]):
                v = indices[p]
                if not reached[v]:
                    reached[v] = True
                    if not bad[v]:
                        count += 1
                if expanded[v]:
                    continue
                expanded[v] = True
                for q in range(indptr[v], indptr[v + 1]):
                    w = indices[q]
                    if not reached[w]:
                        reached[w] = True
                        if not bad[w]:
                            count += 1
        out[i] = count / (n - j) if n > j else 0.0
    return out


def reliable_email_curve(graph: Graph, *, rng: np.random.Generator, ks=RE_COMPROMISED,
                         runs: int = RE_RUNS) -> np.ndarray:
    """Mean share of nodes spammed by ``k`` random compromised nodes, for each ``k``."""
    rng = check_rng(rng)
    n = graph.n_nodes
    ks = np.minimum(np.asarray(ks, dtype=np.int64), n)
    if n == 0:
        return np.zeros(ks.size)
    indptr, indices = _csr(graph)
    total = np.zeros(ks.size)
    for _ in range(runs):
        order = rng.permutation(n)[: int(ks.max())]
        total += _two_hop_growth(indptr, indices, order, ks, n)
    return total / runs


@register_metric("reliable_email", kinds=Kind.GRAPH, higher_is_better=False,
                 label="share of nodes spammed")
def reliable_email(truth, release, rng=None) -> dict:
    """Reliable Email curve of the release: ``{k: share spammed}`` (sala2011 Fig 8); NaN
    where more nodes are compromised than the graph has."""
    graph = _release(truth, release, "reliable_email")
    curve = _release_curve(graph, "re", _rng(rng), _re_curve)
    return {str(k): float(v) if k <= graph.n_nodes else float("nan")
            for k, v in zip(RE_COMPROMISED, curve, strict=True)}


def _re_curve(graph: Graph, rng: np.random.Generator) -> np.ndarray:
    return reliable_email_curve(graph, rng=rng)


def _curves(truth, release, rng, metric: str, key: str, curve):
    """``curve(graph, rng)`` of the truth and of the release. The truth's is computed once
    per process, with a fixed seed (0); the release's once per release and stream."""
    same_type(truth, release, (Graph,), metric)
    truth_curve = memo(truth, ("truth", key), lambda: curve(truth, np.random.default_rng(0)))
    return truth_curve, _release_curve(release, key, _rng(rng), curve)


def _max_relative_gap(ours: np.ndarray, truth: np.ndarray) -> float:
    ok = truth > 0
    if not ok.any():
        return float("nan")
    return float(np.max(np.abs(ours[ok] / truth[ok] - 1.0)))


@register_metric("reliable_email_deviation", kinds=Kind.GRAPH, higher_is_better=False,
                 label="max relative RE gap", stream="reliable_email")
def reliable_email_deviation(truth, release, rng=None) -> float:
    """Largest relative gap ``|RE_release(k) / RE_truth(k) - 1|`` over the ``k >=``
    :data:`RE_DEVIATION_MIN_K` of :data:`RE_COMPROMISED` (sala2011 Sec 5.2: "the difference
    ... is at most 10%")."""
    t, ours = _curves(truth, release, rng, "reliable_email_deviation", "re", _re_curve)
    keep = np.asarray(RE_COMPROMISED) >= RE_DEVIATION_MIN_K
    return _max_relative_gap(ours[keep], t[keep])


# --------------------------------------------------------------------------- influence
def degree_discount_seeds(graph: Graph, k: int, *, p: float = IC_PROBABILITY) -> np.ndarray:
    """Degree Discount IC (Chen et al. 2009, Algorithm 4): ``k`` seeds in greedy order.

    A lazy max-heap of ``(dd_v, v)``; ties go to the smaller node id."""
    n = graph.n_nodes
    k = min(int(k), n)
    indptr, indices = _csr(graph)
    deg = np.diff(indptr).astype(float)
    dd = deg.copy()
    t = np.zeros(n)
    chosen = np.zeros(n, bool)
    heap = [(-dd[v], v) for v in range(n)]
    heapq.heapify(heap)
    seeds = []
    while len(seeds) < k and heap:
        neg, u = heapq.heappop(heap)
        if chosen[u] or -neg != dd[u]:
            continue
        chosen[u] = True
        seeds.append(u)
        for v in indices[indptr[u]:indptr[u + 1]]:
            if not chosen[v]:
                t[v] += 1
                dd[v] = deg[v] - 2 * t[v] - (deg[v] - t[v]) * t[v] * p
                heapq.heappush(heap, (-dd[v], v))
    return np.asarray(seeds, dtype=np.int64)


@njit(cache=True)
def _skip(rng, log_q):
    """Failures before the next success of Bernoulli trials that fail with probability ``q =
    exp(log_q)``: one geometric draw (one uniform), as a float (it may exceed any index)."""
    return np.floor(np.log(1.0 - rng.random()) / log_q)


@njit(cache=True)
def _live_in_edges(indptr, indices, model, log_q, rng, src, dst):
    """One run's live edges ``src[i] -> dst[i]``, ``i <`` the returned count, drawn node by
    node over each node's in-edges. WC (model 1): every edge ``u -> v`` is live with
    probability ``1 / deg(v)``, independently (Kempe et al. 2003, Claim 2.3: a cascade
    whose coins are flipped in advance); the live in-edges of ``v`` are reached by geometric
    skips, ``Binomial(deg(v), 1 / deg(v))`` of them (one on average). LT (model 2): every
    node of degree > 0 picks exactly one in-edge, uniformly (weights ``1 / deg(v)``, which
    sum to 1: Kempe et al. 2003, Theorem 2.5, the live-edge form of the threshold model).
    ``log_q[v] = log(1 - 1 / deg(v))`` (WC)."""
    n = indptr.size - 1
    count = 0
    for v in range(n):
        lo, hi = indptr[v], indptr[v + 1]
        dv = hi - lo
        if dv == 0:
            continue
        if model == 2:
            src[count] = indices[lo + int(rng.random() * dv)]
            dst[count] = v
            count += 1
        else:
            j = lo + _skip(rng, log_q[v])
            while j < hi:
                src[count] = indices[int(j)]
                dst[count] = v
                count += 1
                j += 1.0 + _skip(rng, log_q[v])
    return count


@njit(cache=True)
def _cascade_curve(indptr, indices, order, stops, runs, model, p, rng):
    """Mean final active count from each seed set ``order[:stops[j]]``, from one cascade per
    run that grows its seed set through the stops. model 0: IC(p), 1: WC (1/deg(v)), 2: LT
    (1/deg(v)).

    Each run draws a live-edge graph (Kempe, Kleinberg & Tardos, KDD 2003, Sec 2): the
    final active set of a cascade is the set its seeds reach over live edges, with the
    distribution of the literal process. IC: every edge ``u -> v`` is live with probability
    ``p``, drawn when ``u`` is reached, by geometric skips over ``u``'s edges (cost: the live
    edges, not ``deg(u)``). WC and LT: :func:`_live_in_edges` draws the whole run's live
    edges, about one per node, before the traversal (cost: ``n`` per run instead of the
    edges of every active node). In one run, stage ``j`` adds the seeds
    ``order[stops[j-1]:stops[j]]`` and continues the traversal of stage ``j - 1``: what the
    seeds reach does not depend on the order of the traversal, so each stage ends on the
    set a fresh cascade from ``order[:stops[j]]`` would reach. Every stop's value is a Monte
    Carlo mean over ``runs`` independent cascades, as from its own runs, and the stops
    share their runs (common random numbers).
    """
    n = indptr.size - 1
    active = np.zeros(n, np.int64)  # run stamp when active
    queue = np.empty(n, np.int64)
    totals = np.zeros(stops.size)
    live = model != 0
    src = np.empty(indices.size if model == 1 else n, np.int64)
    dst = np.empty_like(src)
    ptr = np.zeros(n + 1, np.int64)
    child = np.empty_like(src)
    log_q = np.log1p(-p) if model == 0 and p < 1.0 else -np.inf
    deg = (indptr[1:] - indptr[:-1]).astype(np.float64)
    log_q_in = np.log1p(-1.0 / np.maximum(deg, 1.0))  # WC: -inf where deg(v) = 1
    for r in range(1, runs + 1):
        if live:  # this run's live edges, as out-lists (a counting sort by source)
            count = _live_in_edges(indptr, indices, model, log_q_in, rng, src, dst)
            ptr[:] = 0
            for i in range(count):
                ptr[src[i] + 1] += 1
            for u in range(n):
                ptr[u + 1] += ptr[u]
            for i in range(count):
                child[ptr[src[i]]] = dst[i]
                ptr[src[i]] += 1
            for u in range(n, 0, -1):
                ptr[u] = ptr[u - 1]
            ptr[0] = 0
        tail = 0
        head = 0
        start = 0
        for j in range(stops.size):
            for i in range(start, stops[j]):
                s = order[i]
                if active[s] != r:
                    active[s] = r
                    queue[tail] = s
                    tail += 1
            start = stops[j]
            while head < tail:
                u = queue[head]
                head += 1
                if live:
                    for q in range(ptr[u], ptr[u + 1]):
                        v = child[q]
                        if active[v] != r:
                            active[v] = r
                            queue[tail] = v
                            tail += 1
                elif p > 0.0:
                    hi = indptr[u + 1]
                    q = indptr[u] + _skip(rng, log_q)
                    while q < hi:
                        v = indices[int(q)]
                        if active[v] != r:
                            active[v] = r
                            queue[tail] = v
                            tail += 1
                        q += 1.0 + _skip(rng, log_q)
            totals[j] += tail
    return totals / runs


_MODELS = {"ic": 0, "wc": 1, "lt": 2}


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def spread(graph: Graph, seeds, *, model: str, rng: np.random.Generator,
           runs: int = MC_RUNS, p: float = IC_PROBABILITY) -> float:
    """Expected number of nodes active at the end of ``model`` from ``seeds``."""
    rng = check_rng(rng)
    seeds = np.asarray(seeds, dtype=np.int64)
    if graph.n_nodes == 0 or seeds.size == 0:
        return float(seeds.size)
    indptr, indices = _csr(graph)
    stops = np.array([seeds.size], dtype=np.int64)
    return float(_cascade_curve(indptr, indices, seeds, stops, int(runs), _MODELS[model],
                                float(p), rng)[0])


def influence_curve(graph: Graph, *, model: str, rng: np.random.Generator) -> np.ndarray:
    """Spread of the first ``k`` Degree Discount seeds, for each ``k`` of :data:`SEEDS`.

    :data:`MC_RUNS` cascades, each growing its seed set through the numbers of
    :data:`SEEDS` (:func:`_cascade_curve`): each point is the mean of :data:`MC_RUNS`
    independent runs, as from its own cascades, for the cost of the largest seed set's."""
    rng = check_rng(rng)
    order = memo(graph, ("degree_discount", max(SEEDS)), lambda: _read_only(
        degree_discount_seeds(graph, max(SEEDS))))  # one order for the three models
    stops = np.minimum(np.asarray(SEEDS, dtype=np.int64), order.size)
    if graph.n_nodes == 0:
        return stops.astype(float)
    indptr, indices = _csr(graph)
    return _cascade_curve(indptr, indices, order, stops, MC_RUNS, _MODELS[model],
                          IC_PROBABILITY, rng)


def _spread_curve(model: str):
    return lambda graph, rng: influence_curve(graph, model=model, rng=rng)


def _influence(truth, release, rng, model, metric) -> dict:
    graph = _release(truth, release, metric)
    curve = _release_curve(graph, model, _rng(rng), _spread_curve(model))
    return {str(k): float(v) for k, v in zip(SEEDS, curve, strict=True)}


def _influence_gap(truth, release, rng, model, metric) -> float:
    t, ours = _curves(truth, release, rng, metric, model, _spread_curve(model))
    # points where the seeds cover a graph compare sizes, not spread: left out
    keep = np.asarray(SEEDS) < min(truth.n_nodes, release.n_nodes)
    return _max_relative_gap(ours[keep], t[keep]) if keep.any() else float("nan")


@register_metric("influence_ic", kinds=Kind.GRAPH, higher_is_better=True,
                 label="influenced nodes (IC)")
def influence_ic(truth, release, rng=None) -> dict:
    """Degree Discount seeds, Independent Cascade spread per number of seeds (Fig 9)."""
    return _influence(truth, release, rng, "ic", "influence_ic")


@register_metric("influence_wc", kinds=Kind.GRAPH, higher_is_better=True,
                 label="influenced nodes (WC)")
def influence_wc(truth, release, rng=None) -> dict:
    """Degree Discount seeds, Weighted Cascade spread per number of seeds (Fig 9)."""
    return _influence(truth, release, rng, "wc", "influence_wc")


@register_metric("influence_lt", kinds=Kind.GRAPH, higher_is_better=True,
                 label="influenced nodes (LT)")
def influence_lt(truth, release, rng=None) -> dict:
    """Degree Discount seeds, Linear Threshold spread per number of seeds (Fig 9)."""
    return _influence(truth, release, rng, "lt", "influence_lt")


@register_metric("influence_deviation_ic", kinds=Kind.GRAPH, higher_is_better=False,
                 label="max relative spread gap (IC)", stream="influence_ic")
def influence_deviation_ic(truth, release, rng=None) -> float:
    """Largest ``|spread_release(k) / spread_truth(k) - 1|`` over :data:`SEEDS`, IC."""
    return _influence_gap(truth, release, rng, "ic", "influence_deviation_ic")


@register_metric("influence_deviation_wc", kinds=Kind.GRAPH, higher_is_better=False,
                 label="max relative spread gap (WC)", stream="influence_wc")
def influence_deviation_wc(truth, release, rng=None) -> float:
    """Largest ``|spread_release(k) / spread_truth(k) - 1|`` over :data:`SEEDS`, WC."""
    return _influence_gap(truth, release, rng, "wc", "influence_deviation_wc")


@register_metric("influence_deviation_lt", kinds=Kind.GRAPH, higher_is_better=False,
                 label="max relative spread gap (LT)", stream="influence_lt")
def influence_deviation_lt(truth, release, rng=None) -> float:
    """Largest ``|spread_release(k) / spread_truth(k) - 1|`` over :data:`SEEDS`, LT."""
    return _influence_gap(truth, release, rng, "lt", "influence_deviation_lt")
