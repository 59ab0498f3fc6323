"""Realizability repair: a realizable joint degree matrix near a noisy dK-2 series.

The dK-2 mechanisms of sala2011 perturb a graph's dK-2 series; before a graph can be
generated from it the noisy series is turned into a realizable JDM
(:func:`~privpub.algorithms.dk.series.is_realizable`), reading nothing but the noisy series
(post-processing). The rule is :func:`repair_joint_degree`'s; why it is this rule:
docs/design.md (sala2011).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from privpub.algorithms.dk.series import beta_order, dk2_l1
from privpub.errors import PrivpubError
from privpub.types import JointDegree

__all__ = ["repair_joint_degree"]


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
    """The rule of :func:`repair_joint_degree`. ``low``/``high``/``e`` beta-ordered, int64;
    every row ``k >= 2`` has a cell ``(1, k)`` (possibly 0). Modifies ``e``; returns node
    counts."""
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

    Returns the repaired series (cells with a positive count, beta-ordered) and a report:
    ``l1`` (L1 change from the rounded, clipped input), ``l1_from_input`` (from the raw
    input), ``nodes`` and ``edges`` of the result.

    Notes
    -----
    ``s_k`` and ``n_k`` as in :mod:`privpub.algorithms.dk.series`.

    1. Round every noisy count to the nearest integer and clip at 0.
    2. Visit degrees ``k = D, D-1, ..., 2`` (``D`` the largest degree listed). When ``k`` is
       visited, every cell ``(k, h)`` with ``h > k`` is final. Choose ``n_k`` as the integer
       nearest ``s_k / k`` but at least ``max_h ceil(e[k, h] / n_h)`` (so those final cells
       fit), clip ``e[k, k]`` to ``n_k (n_k - 1) / 2``, then add or remove the ``|k n_k -
       s_k|`` missing or surplus stubs in the cells ``(l, k)``, ``l < k``, in proportion to
       their counts (largest remainder; removal may also take whole diagonal edges). If
       removal is impossible (too few stubs, or an odd remainder only the diagonal could
       absorb) ``n_k`` goes up by one. If there is no lower cell to add to, the stubs go to
       ``(1, k)``: they become new leaves. Changes to ``(l, k)`` move the imbalance to the
       smaller degree ``l``, visited later.
    3. Degree 1 needs nothing: ``n_1 = s_1``. The result meets every condition of
       :func:`~privpub.algorithms.dk.series.is_realizable` (cells ``(1, h)`` always fit: ``e[1, h]
       <=
       n_1`` and ``n_h >= 1``).
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

