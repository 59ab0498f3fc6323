"""PrivHRG (xiao2014): a synthetic graph from a privately sampled hierarchical random graph.

Three steps, each on :class:`~privpub.ledger.PrivacyLedger` (xiao2014 Sec 4):

1. **Dendrogram** (``epsilon * mcmc_share``): a Markov chain over dendrograms (binary trees
   whose leaves are the nodes) whose stationary law is the exponential mechanism with the
   HRG log-likelihood ``logL(T) = sum_r -n_r h(e_r / n_r)`` as quality (``n_r = |L_r||R_r|``
   leaf pairs and ``e_r`` edges whose lowest common ancestor is ``r``; ``h`` the binary
   entropy in nats). Its sensitivity under adding or removing one edge is ``Delta_U =
   |log p + (N - 1) log(1 - p)|`` with ``N = ceil(n/2) floor(n/2)`` the most leaf pairs one
   internal node can have and ``p = 1/N`` (one edge changes one ``e_r`` by one; the change
   ``-n_r h((e+1)/n_r) + n_r h(e/n_r)`` is largest in size at ``e = 0`` and grows with
   ``n_r``); the chain targets ``P(T) ~ exp(eps_1 logL(T) / (2 Delta_U))``.
2. **Connection probabilities** (the rest, ``eps_2``): every internal node's ``e_r`` plus
   ``Lap(1 / eps_2)``, divided by ``n_r``. Each edge has exactly one lowest common ancestor,
   so the counts are disjoint (parallel composition: L1 sensitivity 1 for the vector).
   As the authors' code (``flag_control``), a subtree so small that the noise would swamp
   its counts (``1/(n_r eps_2) >= 0.05`` and ``1/(eps_2 s(s-1)/2) >= 0.01`` for its ``s``
   leaves) releases one noisy count of all the edges inside it and becomes one
   Erdős–Rényi block; still one count per edge.
3. **Graph** (post-processing): per internal node ``Binomial(n_r, p_r)`` pairs drawn
   uniformly without replacement between its left and right leaf sets (per ER block,
   between its leaves): the HRG's law, in time linear in the output, no ``n x n`` matrix.

The chain runs a fixed, data-independent number of steps (``mcmc_steps_per_node * n``;
default 1100, the minimum of the authors' code: 1000 ``n`` to equilibrium plus 100 ``n``
before its first sample; their convergence test, which reads the likelihood trace, is not
used). A finite chain only approximates its stationary law, so the dendrogram's
``eps_1`` is the exponential mechanism's, not a proven guarantee of the finite chain: the
registration's caveat says so. A move costs time proportional to the smaller of the two
subtrees it rearranges (leaves plus degrees), not the ``O(|A| + |B|)`` subtree scans of
Clauset's and the authors' code: a leaf is on the smaller side of at most ``log2 n`` of its
ancestors, so a uniformly chosen move costs ``O(log n)`` leaves on average over a tree.

References
----------
.. [XCT14] Q. Xiao, R. Chen, K.-L. Tan. Differentially private network data release via
   structural inference. KDD 2014, Sec 4 (PrivHRG).
.. [CMN08] A. Clauset, C. Moore, M. E. J. Newman. Hierarchical structure and the prediction
   of missing links in networks. Nature 453, 2008 (the HRG and its Markov chain).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.noise import laplace_mechanism
from privpub.registry import EDGE_DP, register_mechanism
from privpub.types import Graph, Kind, Release
from privpub.validation import check_epsilon, check_fraction, check_rng

__all__ = [
    "CAVEAT_MCMC",
    "hrg_sensitivity",
    "hrg_log_likelihood",
    "priv_hrg",
]

#: Why the dendrogram step's epsilon is not a proven guarantee (stored with every row).
CAVEAT_MCMC = (
    "PrivHRG samples its dendrogram by a finite Markov chain whose stationary law is the "
    "exponential mechanism (xiao2014 Sec 4); a finite chain only approximates that law, so "
    "the dendrogram step's epsilon holds in the limit of infinitely many steps, not for the "
    "finite chain (the noisy connection probabilities are exactly Laplace)"
)
_CAVEAT_SUMMARY = ("dendrogram by a finite MCMC: the exponential mechanism's epsilon holds "
                   "only in the limit")

#: Authors' code (flag_control): thresholds below which a subtree becomes one ER block.
_ER_SCALE = 0.05
_ER_COMMUNITY_SCALE = 0.01


def hrg_sensitivity(n_nodes: int) -> float:
    """``Delta_U`` of the HRG log-likelihood on ``n_nodes`` nodes (xiao2014 Sec 4).

    ``|log p + (N - 1) log(1 - p)|`` with ``N = ceil(n/2) floor(n/2)``, ``p = 1/N``: the
    change of ``e log(e/N) + (N - e) log(1 - e/N)`` from ``e = 0`` to ``e = 1`` at an
    internal node with the most leaf pairs, the largest change one edge can cause.
    """
    n = int(n_nodes)
    if n < 3:
        raise NotApplicableError(f"PrivHRG needs at least 3 nodes, got {n}")
    big = math.ceil(n / 2) * math.floor(n / 2)
    p = 1.0 / big
    return abs(math.log(p) + (big - 1) * math.log1p(-p))


# --------------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def _node_loglik(e, pairs):
    """``e log(e/pairs) + (pairs - e) log(1 - e/pairs)`` (0 at e = 0 or e = pairs)."""
    if e <= 0 or e >= pairs:
        return 0.0
    ef = float(e)
    rest = float(pairs - e)
    total = float(pairs)
    return ef * math.log(ef / total) + rest * math.log1p(-ef / total)


@njit(cache=True)
def _random_dendrogram(n, gen):
    """A random dendrogram on ``n`` leaves (the authors' random-BST start): every internal
    node splits its leaves at a uniform point of a random permutation. Internal node ids
    are ``n..2n-2`` (root ``n``), each larger than its parent's."""
    perm = gen.permutation(n)
    left = np.empty(n - 1, np.int64)
    right = np.empty(n - 1, np.int64)
    parent = np.full(2 * n - 1, -1, np.int64)
    st_node = np.empty(n, np.int64)
    st_lo = np.empty(n, np.int64)
    st_hi = np.empty(n, np.int64)
    top = 0
    st_node[0] = n
    st_lo[0] = 0
    st_hi[0] = n
    top = 1
    next_id = n + 1
    while top > 0:
        top -= 1
        node = st_node[top]
        lo = st_lo[top]
        hi = st_hi[top]
        split = lo + 1 + gen.integers(0, hi - lo - 1)
        for side in range(2):
            a = lo if side == 0 else split
            b = split if side == 0 else hi
            if b - a == 1:
                child = perm[a]
            else:
                child = next_id
                next_id += 1
                st_node[top] = child
                st_lo[top] = a
                st_hi[top] = b
                top += 1
            if side == 0:
                left[node - n] = child
            else:
                right[node - n] = child
            parent[child] = node
    return left, right, parent


@njit(cache=True)
def _edge_ids(indptr, indices):
    """Per CSR slot, the id of its undirected edge (ids in ``u < v`` row order)."""
    n = indptr.shape[0] - 1
    eid = np.empty(indices.shape[0], np.int64)
    m = 0
    for u in range(n):
        for s in range(indptr[u], indptr[u + 1]):
            if u < indices[s]:
                eid[s] = m
                m += 1
    for u in range(n):
        for s in range(indptr[u], indptr[u + 1]):
            w = indices[s]
            if u > w:
                lo = indptr[w]
                hi = indptr[w + 1]
                while lo < hi:  # sorted row w: find u
                    mid = (lo + hi) // 2
                    if indices[mid] < u:
                        lo = mid + 1
                    else:
                        hi = mid
                eid[s] = eid[lo]
    return eid, m


@njit(cache=True)
def _initial_state(n, indptr, indices, eid, m, left, right, parent):
    """Sizes, degree volumes, each edge's lowest common ancestor and per-node ``e_r``."""
    size = np.ones(2 * n - 1, np.int64)
    vol = np.zeros(2 * n - 1, np.int64)
    for u in range(n):
        vol[u] = indptr[u + 1] - indptr[u]
    for r in range(2 * n - 2, n - 1, -1):  # children have larger ids: bottom-up
        size[r] = size[left[r - n]] + size[right[r - n]]
        vol[r] = vol[left[r - n]] + vol[right[r - n]]
    depth = np.zeros(2 * n - 1, np.int64)
    for r in range(n + 1, 2 * n - 1):  # top-down
        depth[r] = depth[parent[r]] + 1
    for u in range(n):
        depth[u] = depth[parent[u]] + 1
    lca = np.empty(m, np.int64)
    e = np.zeros(n - 1, np.int64)
    for u in range(n):
        for s in range(indptr[u], indptr[u + 1]):
            w = indices[s]
            if u < w:
                a = u
                b = w
                while depth[a] > depth[b]:
                    a = parent[a]
                while depth[b] > depth[a]:
                    b = parent[b]
                while a != b:
                    a = parent[a]
                    b = parent[b]
                lca[eid[s]] = a
                e[a - n] += 1
    loglik = np.empty(n - 1, np.float64)
    for r in range(n - 1):
        loglik[r] = _node_loglik(e[r], size[left[r]] * size[right[r]])
    return size, vol, lca, e, loglik


@njit(cache=True)
def _subtree_leaves(s, n, left, right, stack, out):
    """The leaves of subtree ``s`` into ``out``; returns their number."""
    if s < n:
        out[0] = s
        return 1
    k = 0
    top = 1
    stack[0] = s
    while top > 0:
        top -= 1
        v = stack[top]
        if v < n:
            out[k] = v
            k += 1
        else:
            stack[top] = left[v - n]
            stack[top + 1] = right[v - n]
            top += 2
    return k


@njit(cache=True)
def _mcmc(n, steps, temperature, gen, indptr, indices, eid, left, right, parent, size, vol,
          lca, e, loglik, root):
    """``steps`` Metropolis moves at ``temperature`` (``eps_1 / (2 Delta_U)``); returns
    the root and the number of accepted moves.

    A move picks a uniform non-root internal node ``y`` (children ``a``, ``b``; sibling
    ``k`` under ``x``) and one of the two other pairings, ``((c, k), o)`` with ``c`` one of
    ``a``, ``b`` and ``o`` the other: a symmetric proposal on unordered trees (Clauset et
    al.'s move), so the Metropolis rule targets ``exp(temperature * logL)``. Edges between
    ``c`` and ``k`` are counted from whichever of ``a``, ``b`` is cheaper (their edges whose
    ancestor is ``x``), and an accepted move relabels edges on that side only (choosing
    which of ``x``, ``y`` becomes the lower node): the cost is the smaller side's.
    """
    stack = np.empty(2 * n, np.int64)
    leaves = np.empty(n, np.int64)
    accepted = 0
    for _ in range(steps):
        y = n + gen.integers(0, n - 1)
        while y == root:
            y = n + gen.integers(0, n - 1)
        x = parent[y]
        a = left[y - n]
        b = right[y - n]
        k = right[x - n] if left[x - n] == y else left[x - n]
        if gen.random() < 0.5:
            c = a
            o = b
        else:
            c = b
            o = a
        # the cheaper of c and o: count its edges whose ancestor is x (its edges to k)
        iter_c = size[c] + vol[c] <= size[o] + vol[o]
        s = c if iter_c else o
        nl = _subtree_leaves(s, n, left, right, stack, leaves)
        cnt = 0
        for i in range(nl):
            u = leaves[i]
            for t in range(indptr[u], indptr[u + 1]):
                if lca[eid[t]] == x:
                    cnt += 1
        ex = e[x - n]
        ey = e[y - n]
        e_low = cnt if iter_c else ex - cnt  # edges c-k
        e_up = ex + ey - e_low  # edges c-o and o-k
        pairs_low = size[c] * size[k]
        pairs_up = (size[c] + size[k]) * size[o]
        l_low = _node_loglik(e_low, pairs_low)
        l_up = _node_loglik(e_up, pairs_up)
        d = l_low + l_up - loglik[x - n] - loglik[y - n]
        if d < 0.0 and gen.random() >= math.exp(temperature * d):
            continue
        accepted += 1
        if iter_c:
            lo_id = y  # y = {c, k}, x = {y, o}: c's edges swap ancestors x <-> y
            up_id = x
            for i in range(nl):
                u = leaves[i]
                for t in range(indptr[u], indptr[u + 1]):
                    g = eid[t]
                    if lca[g] == x:
                        lca[g] = y
                    elif lca[g] == y:
                        lca[g] = x
        else:
            lo_id = x  # x = {c, k}, y = {x, o} takes x's place: o-k edges move x -> y
            up_id = y
            for i in range(nl):
                u = leaves[i]
                for t in range(indptr[u], indptr[u + 1]):
                    g = eid[t]
                    if lca[g] == x:
                        lca[g] = y
            px = parent[x]
            if px == -1:
                root = y
            elif left[px - n] == x:
                left[px - n] = y
            else:
                right[px - n] = y
            parent[y] = px
        left[lo_id - n] = c
        right[lo_id - n] = k
        parent[c] = lo_id
        parent[k] = lo_id
        left[up_id - n] = lo_id
        right[up_id - n] = o
        parent[lo_id] = up_id
        parent[o] = up_id
        size[lo_id] = size[c] + size[k]
        vol[lo_id] = vol[c] + vol[k]
        size[up_id] = size[lo_id] + size[o]
        vol[up_id] = vol[lo_id] + vol[o]
        e[lo_id - n] = e_low
        e[up_id - n] = e_up
        loglik[lo_id - n] = l_low
        loglik[up_id - n] = l_up
    return root, accepted


@njit(cache=True)
def _leaf_order(n, root, left, right):
    """Leaves in depth-first order and each node's first position: every subtree is the
    contiguous block ``order[start[v] : start[v] + size[v]]``."""
    order = np.empty(n, np.int64)
    start = np.empty(2 * n - 1, np.int64)
    stack = np.empty(2 * n, np.int64)
    top = 1
    stack[0] = root
    k = 0
    while top > 0:
        top -= 1
        v = stack[top]
        start[v] = k
        if v < n:
            order[k] = v
            k += 1
        else:
            stack[top] = right[v - n]
            stack[top + 1] = left[v - n]
            top += 2
    return order, start


@njit(cache=True)
def _below_rec(n, left, right, e):
    """Edges inside each internal node's subtree (the sum of ``e`` over its internal
    nodes; ids are not ordered by depth after moves, so children first by Kahn's order)."""
    below = e.copy()
    parent_of = np.full(n - 1, -1, np.int64)
    for r in range(n - 1):
        for child in (left[r], right[r]):
            if child >= n:
                parent_of[child - n] = r
    # order internal nodes so that children come before parents (Kahn on child counts)
    pending = np.zeros(n - 1, np.int64)
    for r in range(n - 1):
        for child in (left[r], right[r]):
            if child >= n:
                pending[r] += 1
    queue = np.empty(n - 1, np.int64)
    head = 0
    tail = 0
    for r in range(n - 1):
        if pending[r] == 0:
            queue[tail] = r
            tail += 1
    while head < tail:
        r = queue[head]
        head += 1
        p = parent_of[r]
        if p >= 0:
            below[p] += below[r]
            pending[p] -= 1
            if pending[p] == 0:
                queue[tail] = p
                tail += 1
    return below


@njit(cache=True)
def _place_pairs(gen, order, blk_start, blk_left, blk_right, blk_count, total):
    """Distinct uniform pairs per block: a bipartite block (``blk_right > 0``) joins
    ``order[start : start+left]`` to the next ``right`` leaves; an ER block
    (``blk_right == 0``) pairs its ``left`` leaves among themselves."""
    out = np.empty((total, 2), np.int64)
    k = 0
    for b in range(blk_start.shape[0]):
        cnt = blk_count[b]
        if cnt == 0:
            continue
        st = blk_start[b]
        nl = blk_left[b]
        nr = blk_right[b]
        pairs = nl * nr if nr > 0 else nl * (nl - 1) // 2
        codes = _distinct_codes(gen, pairs, cnt)
        for code in codes:
            if nr > 0:
                out[k, 0] = order[st + code // nr]
                out[k, 1] = order[st + nl + code % nr]
            else:  # code -> (i < j) in row-major upper triangle
                i = 0
                rem = code
                while rem >= nl - 1 - i:
                    rem -= nl - 1 - i
                    i += 1
                out[k, 0] = order[st + i]
                out[k, 1] = order[st + i + 1 + rem]
            k += 1
    return out


@njit(cache=True)
def _distinct_codes(gen, pairs, cnt):
    """``cnt`` distinct uniform integers in ``[0, pairs)`` (``cnt <= pairs``)."""
    if 2 * cnt > pairs:  # dense: a partial Fisher-Yates shuffle of all codes
        allc = np.arange(pairs)
        for i in range(cnt):
            j = i + gen.integers(0, pairs - i)
            allc[i], allc[j] = allc[j], allc[i]
        return allc[:cnt].copy()
    seen = set()
    res = np.empty(cnt, np.int64)
    k = 0
    while k < cnt:
        c = gen.integers(0, pairs)
        if c not in seen:
            seen.add(c)
            res[k] = c
            k += 1
    return res


# --------------------------------------------------------------------------- python side
def hrg_log_likelihood(graph: Graph, left, right) -> float:
    """``logL`` of ``graph`` under the dendrogram ``left``/``right`` (internal node ``r``
    has children ``left[r - n]``, ``right[r - n]``; leaves ``0..n-1``), from scratch: the
    quality the exponential mechanism scores, for tests (xiao2014 Sec 4)."""
    n = graph.n_nodes
    left = np.asarray(left, np.int64)
    right = np.asarray(right, np.int64)
    parent = np.full(2 * n - 1, -1, np.int64)
    parent[left] = np.arange(n, 2 * n - 1)
    parent[right] = np.arange(n, 2 * n - 1)
    adj = graph.adjacency
    indptr = adj.indptr.astype(np.int64)
    indices = adj.indices.astype(np.int64)
    eid, m = _edge_ids(indptr, indices)
    roots = np.flatnonzero(parent[n:] == -1) + n
    if roots.size != 1:
        raise PrivpubError("left/right do not form one dendrogram")
    loglik = _initial_state_any(n, indptr, indices, eid, m, left, right, int(roots[0]))[4]
    return float(loglik.sum())


def _initial_state_any(n, indptr, indices, eid, m, left, right, root):
    """:func:`_initial_state` for any id order: relabel internal nodes top-down first."""
    order = [root]
    for v in order:
        if v >= n:
            order.extend((int(left[v - n]), int(right[v - n])))
    internal = [v for v in order if v >= n]
    relabel = np.arange(2 * n - 1)
    relabel[internal] = np.arange(n, 2 * n - 1)
    new_left = np.empty(n - 1, np.int64)
    new_right = np.empty(n - 1, np.int64)
    new_left[relabel[internal] - n] = relabel[left[np.asarray(internal) - n]]
    new_right[relabel[internal] - n] = relabel[right[np.asarray(internal) - n]]
    new_parent = np.full(2 * n - 1, -1, np.int64)
    new_parent[new_left] = np.arange(n, 2 * n - 1)
    new_parent[new_right] = np.arange(n, 2 * n - 1)
    return _initial_state(n, indptr, indices, eid, m, new_left, new_right, new_parent)


def fit_dendrogram(graph: Graph, *, temperature: float, steps: int,
                   rng: np.random.Generator):
    """Run the chain from a random dendrogram; returns ``(left, right, root, e, size,
    accepted, logL)`` (no privacy accounting: :func:`priv_hrg` does it)."""
    n = graph.n_nodes
    adj = graph.adjacency
    indptr = adj.indptr.astype(np.int64)
    indices = adj.indices.astype(np.int64)
    eid, m = _edge_ids(indptr, indices)
    left, right, parent = _random_dendrogram(n, rng)
    size, vol, lca, e, loglik = _initial_state(n, indptr, indices, eid, m, left, right, parent)
    root, accepted = _mcmc(n, int(steps), float(temperature), rng, indptr, indices, eid,
                           left, right, parent, size, vol, lca, e, loglik, n)
    return left, right, int(root), e, size, int(accepted), float(loglik.sum())


def _release_blocks(n, left, right, root, e, size, *, epsilon, er_blocks, rng, ledger):
    """Noisy edge counts of the dendrogram's blocks (one Laplace count per block, blocks
    disjoint in edges) and their pair counts; returns per block ``(start, n_left, n_right,
    pairs, noisy count)`` with ``n_right = 0`` for an ER block."""
    order, start = _leaf_order(n, root, left, right)
    below = _below_rec(n, left, right, e) if er_blocks else None
    blocks = []  # (node, er?)
    stack = [root]
    while stack:
        r = stack.pop()
        i = r - n
        nl = int(size[left[i]])
        nr = int(size[right[i]])
        s = nl + nr
        if (er_blocks and 1.0 / (nl * nr * epsilon) >= _ER_SCALE
                and 1.0 / (epsilon * s * (s - 1) / 2) >= _ER_COMMUNITY_SCALE):
            blocks.append((r, True))
            continue
        blocks.append((r, False))
        stack.extend(c for c in (int(left[i]), int(right[i])) if c >= n)
    nodes = np.array([b[0] for b in blocks], np.int64)
    er = np.array([b[1] for b in blocks], bool)
    sizes_l = size[left[nodes - n]]
    sizes_r = size[right[nodes - n]]
    s = sizes_l + sizes_r
    pairs = np.where(er, s * (s - 1) // 2, sizes_l * sizes_r)
    true_counts = np.where(er, below[nodes - n] if er_blocks else 0, e[nodes - n])
    noisy = laplace_mechanism(true_counts, sensitivity=1.0, epsilon=epsilon, rng=rng,
                              ledger=ledger, label="HRG connection counts (disjoint)")
    return (start[nodes], np.where(er, s, sizes_l), np.where(er, 0, sizes_r), pairs, noisy)


@register_mechanism(
    "priv_hrg",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=EDGE_DP,
    paper="xiao2014",
    source="Sec 4 (PrivHRG)",
    caveat=CAVEAT_MCMC,
    caveat_summary=_CAVEAT_SUMMARY,
    audit={"configurations": [{}], "cost_ms": 8},
    blind_spot="the caveat is the gap between a finite Markov chain and its stationary law "
               "(the exponential mechanism), not a leak a black box sees on tiny graphs: "
               "there the dendrogram's law is near uniform and the Laplace counts and "
               "Binomial sampling dominate the released graph",
)
def priv_hrg(
    graph: Graph,
    *,
    epsilon: float,
    mcmc_share: float = 0.5,
    mcmc_steps_per_node: float = 1100.0,
    er_blocks: bool = True,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """A PrivHRG synthetic graph (xiao2014 Sec 4): private dendrogram, noisy probabilities,
    sampled graph.

    Parameters
    ----------
    graph : Graph
        At least 3 nodes.
    epsilon : float
        Total budget (edge-DP).
    mcmc_share : float
        Fraction of ``epsilon`` for the dendrogram (``eps_1``); the rest (``eps_2``) for
        the connection probabilities. 0.5 as the authors' examples.
    mcmc_steps_per_node : float
        Markov chain steps per node (data-independent count). The default 1100 is the
        authors' code's minimum (1000 n to equilibrium, 100 n before the first sample).
    er_blocks : bool
        The authors' code's ``flag_control``: a subtree whose counts the noise would swamp
        becomes one Erdős–Rényi block with one noisy count (module docstring).
    rng, ledger
        Randomness and budget account.

    Returns
    -------
    Release
        The synthetic :class:`Graph` on the same nodes. ``info``: ``mcmc_steps``,
        ``blocks`` (noisy counts released), ``er_blocks`` (of them ER blocks).
        ``diagnostics`` (read the input): ``acceptance`` of the chain and the dendrogram's
        ``log_likelihood``.
    """
    if not isinstance(graph, Graph):
        raise PrivpubError(f"priv_hrg needs a Graph, got {type(graph).__name__}")
    epsilon = check_epsilon(epsilon)
    mcmc_share = check_fraction(mcmc_share, "mcmc_share")
    rng = check_rng(rng)
    steps_per_node = float(mcmc_steps_per_node)
    if not math.isfinite(steps_per_node) or steps_per_node < 0:
        raise PrivpubError(f"mcmc_steps_per_node must be a number >= 0, got "
                           f"{mcmc_steps_per_node!r}")
    n = graph.n_nodes
    delta_u = hrg_sensitivity(n)  # NotApplicableError below 3 nodes, before any spend
    ledger = ledger if ledger is not None else PrivacyLedger(epsilon)
    eps1 = epsilon * mcmc_share
    eps2 = epsilon - eps1
    steps = int(round(steps_per_node * n))
    ledger.spend(eps1, label="HRG dendrogram (exponential mechanism by MCMC)",
                 sensitivity=delta_u, primitive="exponential")
    left, right, root, e, size, accepted, loglik = fit_dendrogram(
        graph, temperature=eps1 / (2.0 * delta_u), steps=steps, rng=rng)
    starts, n_left, n_right, pairs, noisy = _release_blocks(
        n, left, right, root, e, size, epsilon=eps2, er_blocks=bool(er_blocks), rng=rng,
        ledger=ledger)
    prob = np.clip(noisy / pairs, 0.0, 1.0)
    counts = rng.binomial(pairs, prob).astype(np.int64)
    order, _ = _leaf_order(n, root, left, right)
    edges = _place_pairs(rng, order, starts.astype(np.int64), n_left.astype(np.int64),
                         n_right.astype(np.int64), counts, int(counts.sum()))
    out = Graph.from_edges(edges, n, name=f"priv_hrg({graph.name})")
    return Release(
        out,
        info={"mcmc_steps": steps, "blocks": int(pairs.size),
              "er_blocks": int((n_right == 0).sum())},
        diagnostics={"acceptance": accepted / steps if steps else 0.0,
                     "log_likelihood": loglik},
    )
