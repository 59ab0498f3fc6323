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


def _reach(n, arcs, seeds):
    """The nodes ``seeds`` reach over the directed ``arcs``."""
    out = {u: [] for u in range(n)}
    for u, v in arcs:
        out[u].append(v)
    seen, todo = set(seeds), list(seeds)
    while todo:
        for v in out[todo.pop()]:
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def _exact_spread(g: Graph, seed_sets, model: str, p: float):
    """The exact mean and variance of the final active count from each seed set, by
    enumerating every live-edge graph with its probability: IC / WC, each arc ``u -> v`` live
    independently with probability ``p`` / ``1 / deg(v)``; LT, each node of degree > 0
    picks one neighbour as its live in-arc, uniformly."""
    import itertools

    n, deg = g.n_nodes, np.diff(g.adjacency.indptr)
    nbrs = [list(g.adjacency.indices[g.adjacency.indptr[v]:g.adjacency.indptr[v + 1]])
            for v in range(n)]
    if model == "lt":
        choices = [[(u, v) for u in nbrs[v]] or [None] for v in range(n)]
        weight = np.prod([1 / max(deg[v], 1) for v in range(n)])
        worlds = [([a for a in pick if a], weight) for pick in itertools.product(*choices)]
    else:
        arcs = [(u, v) for v in range(n) for u in nbrs[v]]
        prob = [p if model == "ic" else 1 / deg[v] for _, v in arcs]
        worlds = []
        for live in itertools.product((0, 1), repeat=len(arcs)):
            w = np.prod([q if x else 1 - q for x, q in zip(live, prob, strict=True)])
            worlds.append(([a for a, x in zip(arcs, live, strict=True) if x], w))
    out = []
    for seeds in seed_sets:
        sizes = np.array([len(_reach(n, arcs, seeds)) for arcs, _ in worlds], float)
        w = np.array([w for _, w in worlds])
        assert w.sum() == pytest.approx(1.0)
        mean = float(sizes @ w)
        out.append((mean, float((sizes - mean) ** 2 @ w)))
    return out


def _threshold_cascade(g: Graph, seeds, draw) -> int:
    """The literal Linear Threshold process (Kempe et al. 2003, Sec 2): weights 1 / deg(v),
    a uniform threshold per node, activation rounds until nothing changes."""
    indptr, indices = g.adjacency.indptr, g.adjacency.indices
    thresh = draw.random(g.n_nodes)
    active = set(seeds)
    changed = True
    while changed:
        changed = False
        for v in range(g.n_nodes):
            nbrs = indices[indptr[v]:indptr[v + 1]]
            if v not in active and len(nbrs) and \
                    sum(u in active for u in nbrs) / len(nbrs) >= thresh[v]:
                active.add(v)
                changed = True
    return len(active)


SMALL_GRAPHS = {
    "path": Graph.from_edges([(0, 1), (1, 2), (2, 3)]),
    "star+isolated": Graph.from_edges([(0, 1), (0, 2), (0, 3)], n_nodes=5),
    "triangle+tail": Graph.from_edges([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4)]),
    "random": Graph.from_networkx(nx.gnm_random_graph(6, 7, seed=3)),
}


@pytest.mark.parametrize("name", sorted(SMALL_GRAPHS))
@pytest.mark.parametrize("model", ["ic", "wc", "lt"])
def test_the_cascade_kernel_has_the_exact_expected_spread_at_every_stop(name, model):
    """sala2011 Fig. 9's estimator: one live-edge graph per run, the seed set grown through
    the stops. Against the exact expectation (every live-edge graph enumerated) at each
    stop, within 5 standard errors of 100,000 runs; and `spread` (one seed set) too."""
    from privpub.metrics import applications as app

    g = SMALL_GRAPHS[name]
    order = np.array([0, 3, 1, 2], dtype=np.int64)
    stops = np.array([1, 2, 4], dtype=np.int64)
    runs, p = 100_000, 0.3
    ours = app._cascade_curve(g.adjacency.indptr.astype(np.int64),
                              g.adjacency.indices.astype(np.int64), order, stops, runs,
                              app._MODELS[model], p, rng(1))
    exact = _exact_spread(g, [order[:k] for k in stops], model, p)
    for value, (mean, var) in zip(ours, exact, strict=True):
        assert abs(value - mean) <= 5 * np.sqrt(var / runs) + 1e-12, (value, mean)
    assert spread(g, order[:2], model=model, rng=rng(2), runs=runs, p=p) == pytest.approx(
        exact[1][0], abs=5 * np.sqrt(exact[1][1] / runs) + 1e-12)


@pytest.mark.parametrize("name", sorted(SMALL_GRAPHS))
def test_the_live_edge_form_is_the_threshold_process(name):
    """Kempe et al. 2003, Theorem 2.5, checked here rather than assumed: the literal
    threshold process (uniform thresholds, weights 1 / deg(v)) against the exact spread of
    its live-edge form, within 5 standard errors of 20,000 runs."""
    g = SMALL_GRAPHS[name]
    runs, draw = 20_000, rng(3)
    for seeds in ([0], [0, 3]):
        ((mean, var),) = _exact_spread(g, [seeds], "lt", 0.0)
        literal = np.mean([_threshold_cascade(g, seeds, draw) for _ in range(runs)])
        assert abs(literal - mean) <= 5 * np.sqrt(var / runs) + 1e-12, (literal, mean)


def test_ic_edge_probabilities_at_the_ends():
    """p = 1 reaches the seeds' components, p = 0 only the seeds, at every stop."""
    from privpub.metrics import applications as app

    g = Graph.from_edges([(0, 1), (1, 2), (3, 4)], n_nodes=6)
    args = (g.adjacency.indptr.astype(np.int64), g.adjacency.indices.astype(np.int64),
            np.array([0, 3, 5], dtype=np.int64), np.array([1, 2, 3], dtype=np.int64), 50, 0)
    assert app._cascade_curve(*args, 1.0, rng()).tolist() == [3, 5, 6]
    assert app._cascade_curve(*args, 0.0, rng()).tolist() == [1, 2, 3]


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
