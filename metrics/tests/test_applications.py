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
