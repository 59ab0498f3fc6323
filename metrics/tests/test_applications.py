"""Reliable Email and influence maximisation (sala2011 Sec 5.2)."""

import networkx as nx
import numpy as np
import pytest

from privpub.data import load_dataset
from privpub.errors import PrivpubError
from privpub.metrics.applications import (
    RE_COMPROMISED,
    SEEDS,
    degree_discount_seeds,
    influence_ic,
    influence_lt,
    influence_wc,
    reliable_email,
    reliable_email_curve,
    spread,
)
from privpub.types import DegreeHistogram, Graph


def rng(seed=0):
    return np.random.default_rng(seed)


def naive_degree_discount(g: Graph, k: int, p: float = 0.01):
    """Chen et al. 2009 Algorithm 4, recomputing the argmax every step."""
    nxg = g.to_networkx()
    deg = {v: nxg.degree(v) for v in nxg}
    dd = dict(deg)
    t = dict.fromkeys(nxg, 0)
    seeds = []
    for _ in range(k):
        u = max((v for v in nxg if v not in seeds), key=lambda v: (dd[v], -v))
        seeds.append(u)
        for v in nxg[u]:
            if v not in seeds:
                t[v] += 1
                dd[v] = deg[v] - 2 * t[v] - (deg[v] - t[v]) * t[v] * p
    return seeds


def test_degree_discount_matches_the_algorithm():
    for name in ("karate", "les_miserables"):
        g = load_dataset(name)
        assert degree_discount_seeds(g, 15).tolist() == naive_degree_discount(g, 15)
    g = Graph.from_networkx(nx.gnm_random_graph(200, 600, seed=2))
    assert degree_discount_seeds(g, 30).tolist() == naive_degree_discount(g, 30)


def test_reliable_email_on_hand_made_graphs():
    star = Graph.from_edges([(0, i) for i in range(1, 10)])
    # any one compromised node reaches all the others within two hops
    assert reliable_email_curve(star, rng=rng(), ks=[1], runs=5)[0] == pytest.approx(1.0)
    path = Graph.from_edges([(i, i + 1) for i in range(9)])  # 10 nodes
    share = reliable_email_curve(path, rng=rng(), ks=[1], runs=4000)[0]
    # an end node reaches 2 of 9 others, an inner one 3 or 4: mean (2*2 + 2*3 + 6*4) / 10 / 9
    assert share == pytest.approx((2 * 2 + 2 * 3 + 6 * 4) / 10 / 9, rel=0.03)
    curve = reliable_email(path, path, rng())
    assert list(curve) == [str(k) for k in RE_COMPROMISED]
    with pytest.raises(PrivpubError):
        reliable_email(DegreeHistogram([1.0]), DegreeHistogram([1.0]), rng())


def test_cascades_on_hand_made_graphs():
    path = Graph.from_edges([(0, 1), (1, 2)])
    # IC with p = 1 reaches the whole component; p = 0 only the seeds
    assert spread(path, [0], model="ic", rng=rng(), runs=50, p=1.0) == 3
    assert spread(path, [0], model="ic", rng=rng(), runs=50, p=0.0) == 1
    # WC: 0 -> 1 with prob 1/2, 1 -> 2 with prob 1: E = 1 + 0.5 * 2
    assert spread(path, [0], model="wc", rng=rng(), runs=20000) == pytest.approx(2.0, rel=0.02)
    # LT: node 1 gets weight 1/2 from 0 (active w.p. 1/2), node 2 weight 1 from 1
    assert spread(path, [0], model="lt", rng=rng(), runs=20000) == pytest.approx(2.0, rel=0.02)
    star = Graph.from_edges([(0, i) for i in range(1, 6)])
    # WC from the centre: every leaf (degree 1) is hit with prob 1
    assert spread(star, [0], model="wc", rng=rng(), runs=100) == 6


def _staged_run(indptr, indices, order, stops, model, coin, threshold):
    """One run of :func:`_cascade_curve` in plain Python: the active counts at the stops.
    ``coin(v, dv)`` decides an IC / WC activation attempt on ``v``, ``threshold(v)`` is
    ``v``'s LT threshold (asked once per node, the first time ``v`` is reached)."""
    active, queue, acc, thresh, counts = set(), [], {}, {}, []
    start = 0
    for stop in stops:
        for s in order[start:stop]:
            if s not in active:
                active.add(s)
                queue.append(s)
        start = stop
        while queue:
            u = queue.pop(0)
            for v in indices[indptr[u]:indptr[u + 1]]:
                if v in active:
                    continue
                dv = indptr[v + 1] - indptr[v]
                if model == 2:
                    if v not in thresh:
                        thresh[v], acc[v] = threshold(v), 0.0
                    acc[v] += 1.0 / dv
                    hit = acc[v] >= thresh[v]
                else:
                    hit = coin(u, v, dv)
                if hit:
                    active.add(v)
                    queue.append(v)
        counts.append(set(active))
    return counts


def _closure(indptr, indices, seeds, model, live, thresh):
    """The final active set from ``seeds`` for fixed coins ``live[(u, v)]`` (IC, WC) or
    thresholds ``thresh[v]`` (LT): the least set holding the seeds that no node can join."""
    active = set(seeds)
    changed = True
    while changed:
        changed = False
        for v in range(len(indptr) - 1):
            if v in active:
                continue
            nbrs = indices[indptr[v]:indptr[v + 1]]
            if model == 2:
                joins = sum(u in active for u in nbrs) / len(nbrs) >= thresh[v]
            else:
                joins = any(u in active and live[(u, v)] for u in nbrs)
            if joins:
                active.add(v)
                changed = True
    return active


@pytest.mark.parametrize("model", [0, 1, 2])
def test_staged_cascades_are_the_kernel_and_end_where_fresh_cascades_end(model):
    """sala2011 Fig. 9's curves: one cascade per run grows its seed set through the seed
    counts. (1) The compiled kernel draws and counts exactly what the plain staged run does.
    (2) For fixed coins / thresholds, the staged run ends each stage on the final set of a
    fresh cascade from that stage's seeds (their closure), whatever the stages before."""
    from privpub.metrics.applications import _cascade_curve

    p = 0.2
    for seed in range(4):
        g = Graph.from_networkx(nx.gnm_random_graph(30, 70, seed=seed))
        indptr = g.adjacency.indptr.astype(np.int64)
        indices = g.adjacency.indices.astype(np.int64)
        order = degree_discount_seeds(g, 12)
        stops = np.array([1, 2, 5, 12], dtype=np.int64)
        ours = _cascade_curve(indptr, indices, order, stops, 200, model, p, rng(seed))
        draws = rng(seed)

        def coin(u, v, dv, draws=draws):
            return draws.random() < (p if model == 0 else 1.0 / dv)

        def threshold(v, draws=draws):
            return draws.random()

        ref = np.mean([[len(a) for a in _staged_run(indptr, indices, order, stops, model,
                                                     coin, threshold)]
                       for _ in range(200)], axis=0)
        assert np.array_equal(ours, ref)
        outcome = rng(100 + seed)
        for _ in range(20):
            deg = np.diff(indptr)
            live = {(u, v): outcome.random() < (p if model == 0 else 1.0 / deg[v])
                    for u in range(g.n_nodes) for v in indices[indptr[u]:indptr[u + 1]]}
            thresh = outcome.random(g.n_nodes)
            staged = _staged_run(indptr, indices, order, stops, model,
                                 lambda u, v, dv, live=live: live[(u, v)],
                                 lambda v, thresh=thresh: thresh[v])
            for stop, active in zip(stops, staged, strict=True):
                assert active == _closure(indptr, indices, order[:stop], model, live, thresh)


@pytest.mark.parametrize("model", ["ic", "wc", "lt"])
def test_influence_curve_agrees_with_a_cascade_per_point(model):
    """The staged curve (runs shared by the points) against independent runs per point
    (:func:`spread`, the estimator before): equal means within the Monte Carlo error."""
    from privpub.metrics import applications as app

    g = Graph.from_networkx(nx.barabasi_albert_graph(300, 3, seed=5))
    order = degree_discount_seeds(g, max(SEEDS))
    runs = 4000
    curve = app._cascade_curve(
        g.adjacency.indptr.astype(np.int64), g.adjacency.indices.astype(np.int64), order,
        np.asarray(SEEDS, dtype=np.int64), runs, app._MODELS[model], 0.05, rng(1))
    for k, value in zip(SEEDS, curve, strict=True):
        per_run = [spread(g, order[:k], model=model, rng=rng(10_000 + i), runs=1, p=0.05)
                   for i in range(400)]
        se = np.std(per_run) * np.sqrt(1 / runs + 1 / len(per_run))
        assert abs(value - np.mean(per_run)) < 4 * se + 1e-9, (k, value, np.mean(per_run))


def test_influence_curves_grow_with_seeds():
    g = load_dataset("karate")
    for metric in (influence_ic, influence_wc, influence_lt):
        curve = metric(g, g, rng(1))
        assert list(curve) == [str(k) for k in SEEDS]
        values = [curve[str(k)] for k in SEEDS]
        steps = zip(values, values[1:], strict=False)
        assert values[0] >= 1 and all(b >= a - 0.5 for a, b in steps)
        assert values[-1] <= g.n_nodes


def test_deviation_metrics():
    from privpub.metrics.applications import (
        influence_deviation_ic,
        influence_deviation_lt,
        influence_deviation_wc,
        reliable_email_deviation,
    )

    g = load_dataset("karate")
    other = Graph.from_networkx(nx.gnm_random_graph(34, 78, seed=1))
    for metric in (reliable_email_deviation, influence_deviation_ic, influence_deviation_wc,
                   influence_deviation_lt):
        assert metric(g, g, rng(0)) == 0  # the truth's curve uses seed 0 too
        assert metric(g, other, rng(1)) > 0


@pytest.mark.parametrize("curve_name, gap_name, keep", [
    ("influence_ic", "influence_deviation_ic", np.asarray(SEEDS) < 34),
    ("influence_lt", "influence_deviation_lt", np.asarray(SEEDS) < 34),
    ("reliable_email", "reliable_email_deviation", np.asarray(RE_COMPROMISED) >= 10),
])
def test_a_deviation_compares_the_curve_its_metric_stores_and_computes_it_once(
        monkeypatch, curve_name, gap_name, keep):
    """sala2011 Figs. 8-9 store a curve and its gap to the truth's: one stream, one run."""
    import privpub.metrics.applications as app
    from privpub.registry import get_metric

    curve_metric, gap_metric = get_metric(curve_name), get_metric(gap_name)
    assert gap_metric.stream == curve_name and curve_metric.stream == curve_name
    truth = load_dataset("karate")
    release = Graph.from_networkx(nx.gnm_random_graph(40, 90, seed=3))
    calls = []
    for name in ("influence_curve", "reliable_email_curve"):
        real = getattr(app, name)
        monkeypatch.setattr(app, name, lambda g, *, _real=real, **kw: calls.append(g) or
                            _real(g, **kw))
    gap = gap_metric.func(truth, release, rng=rng(7))       # the release's curve and truth's
    stored = curve_metric.func(truth, release, rng=rng(7))  # read back, not recomputed
    assert sum(g is release for g in calls) == 1
    ours = np.array([stored[k] for k in stored])[keep]
    key = "re" if curve_name == "reliable_email" else curve_name[-2:]
    t = app.memo(truth, ("truth", key), lambda: pytest.fail("the truth's curve is kept"))[keep]
    assert gap == pytest.approx(np.max(np.abs(ours[t > 0] / t[t > 0] - 1)))
    # another stream is another curve
    other = curve_metric.func(truth, release, rng=rng(8))
    assert sum(g is release for g in calls) == 2 and other != stored
