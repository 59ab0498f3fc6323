"""PGB's fifteen queries against networkx and against PGB's formulas, re-implemented here
from reading the authors' evaluation code (their code is not imported)."""

import math

import networkx as nx
import numpy as np
import pytest

from privpub.errors import PrivpubError
from privpub.metrics import pgb_queries as q
from privpub.registry import get_metric
from privpub.types import Graph, Kind

RANDOM = {"community_nmi", "modularity_re"}


# ---- PGB's formulas, re-implemented from reading PGB's utils.py and evaluation scripts
def pgb_rel(a, b):
    # cal_rel: abs((A - B) / (A + 1e-15)) in float64
    a, b = np.float64(a), np.float64(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(abs((a - b) / (a + 1e-15)))


def pgb_kl(a, b):
    # cal_kl: normalise each, zero-pad the shorter, p * log((p + eps) / (q + eps)), summed
    p = np.asarray(a, float) / np.sum(a)
    r = np.asarray(b, float) / np.sum(b)
    if p.size > r.size:
        r = np.pad(r, (0, p.size - r.size))
    elif p.size < r.size:
        p = np.pad(p, (0, r.size - p.size))
    eps = np.finfo(np.float64).eps
    return float(np.sum(p * np.log((p + eps) / (r + eps))))


def pgb_diameter(g):
    # cal_diam: the largest nx.diameter over connected components
    return max(nx.diameter(g.subgraph(c)) for c in nx.connected_components(g))


def pgb_apl(g):
    # average_shortest_path_length_custom: components of >= 2 nodes, weighted by pairs
    if nx.is_connected(g):
        return nx.average_shortest_path_length(g)
    total = pairs = 0.0
    for c in nx.connected_components(g):
        if len(c) > 1:
            k = len(c) * (len(c) - 1) / 2
            total += nx.average_shortest_path_length(g.subgraph(c)) * k
            pairs += k
    return total / pairs if pairs > 0 else float("inf")


def pgb_distance_distribution(g):
    # distance_distribution: bincount of every single-source BFS length (source included)
    lengths = []
    for s in g.nodes:
        lengths.extend(nx.single_source_shortest_path_length(g, s).values())
    return np.bincount(np.int64(lengths))


def pgb_nmi(a, b):
    # sklearn's normalized_mutual_info_score (arithmetic mean), written out
    a, b = np.asarray(a), np.asarray(b)
    n = a.size
    if np.unique(a).size == np.unique(b).size == 1:
        return 1.0
    joint = {}
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        joint[(x, y)] = joint.get((x, y), 0) + 1
    pa = np.bincount(np.unique(a, return_inverse=True)[1]) / n
    pb = np.bincount(np.unique(b, return_inverse=True)[1]) / n
    ia = dict(zip(np.unique(a).tolist(), range(pa.size), strict=True))
    ib = dict(zip(np.unique(b).tolist(), range(pb.size), strict=True))
    mi = sum(c / n * math.log(c / n / (pa[ia[x]] * pb[ib[y]])) for (x, y), c in joint.items())
    h = -(pa @ np.log(pa)) - (pb @ np.log(pb))
    return 0.0 if mi <= 0 else mi / (h / 2)


# ---- graphs
def nx_of(g: Graph) -> nx.Graph:
    out = nx.Graph()
    out.add_nodes_from(range(g.n_nodes))
    out.add_edges_from(g.edges().tolist())
    return out


def dropped(g: Graph, frac: float, seed: int) -> Graph:
    e = g.edges()
    keep = np.random.default_rng(seed).random(len(e)) >= frac
    return Graph.from_edges(e[keep], n_nodes=g.n_nodes)


def karate() -> Graph:
    return Graph.from_edges(list(nx.karate_club_graph().edges()), n_nodes=34)


def random_graph() -> Graph:
    # sparse G(n, p): several components and isolated nodes
    return Graph.from_edges(list(nx.gnp_random_graph(300, 0.008, seed=3).edges()), n_nodes=300)


def reference(t: Graph, r: Graph) -> dict:
    """The fifteen values computed with networkx the way PGB's scripts do (Louvain-based
    ones excluded: their partitions depend on the implementation's random order)."""
    gt, gr = nx_of(t), nx_of(r)
    dt, dr = t.degrees().astype(float), r.degrees().astype(float)
    evt = np.sort(list(nx.eigenvector_centrality(gt, max_iter=10000).values()))[::-1]
    evr = np.sort(list(nx.eigenvector_centrality(gr, max_iter=10000).values()))[::-1]
    k = max(1, int(0.01 * t.n_nodes))
    tri = [sum(nx.triangles(g).values()) // 3 for g in (gt, gr)]
    return {
        "nodes_re": pgb_rel(gt.number_of_nodes(), gr.number_of_nodes()),
        "edges_re": pgb_rel(gt.number_of_edges(), gr.number_of_edges()),
        "triangles_re": pgb_rel(*tri),
        "avg_degree_re": pgb_rel(dt.mean(), dr.mean()),
        "degree_variance_re": pgb_rel(np.var(dt, ddof=1), np.var(dr, ddof=1)),
        "degree_kl": pgb_kl(np.bincount(dt.astype(int)), np.bincount(dr.astype(int))),
        "diameter_re": pgb_rel(pgb_diameter(gt), pgb_diameter(gr)),
        "avg_shortest_path_re": pgb_rel(pgb_apl(gt), pgb_apl(gr)),
        "distance_kl": pgb_kl(pgb_distance_distribution(gt), pgb_distance_distribution(gr)),
        "global_clustering_re": pgb_rel(nx.transitivity(gt), nx.transitivity(gr)),
        "avg_clustering_re": pgb_rel(nx.average_clustering(gt), nx.average_clustering(gr)),
        "assortativity_re": pgb_rel(nx.degree_assortativity_coefficient(gt),
                                    nx.degree_assortativity_coefficient(gr)),
        "eigenvector_mae": float(np.mean(np.abs(evt[:k] - evr[:k]))),
    }


def run(name, t, r, seed=7):
    info = get_metric(name)
    kw = {"rng": np.random.default_rng(seed)} if info.takes_rng else {}
    return info.func(t, r, **kw)


# ---- tests
def test_registered_in_pgb_order():
    assert len(q.PGB_QUERIES) == 15 and len(set(q.PGB_QUERIES)) == 15
    assert q.PGB_QUERIES[0] == "nodes_re" and q.PGB_QUERIES[-1] == "eigenvector_mae"
    for name in q.PGB_QUERIES:
        info = get_metric(name)
        assert info.kinds == (Kind.GRAPH,)
        assert info.higher_is_better is (name == "community_nmi")
        assert info.takes_rng is (name in RANDOM)
        assert info.func.__doc__ and info.label
    assert get_metric("modularity_re").stream == get_metric("community_nmi").stream


@pytest.mark.parametrize("make", [karate, random_graph])
def test_queries_match_networkx(make):
    t = make()
    r = dropped(t, 0.2, seed=1)
    ref = reference(t, r)
    for name, expected in ref.items():
        assert run(name, t, r) == pytest.approx(expected, rel=1e-9, abs=1e-9), name


def test_exact_when_small_and_identical_release_scores_zero():
    t = random_graph()
    for name in q.PGB_QUERIES:
        if name not in ("community_nmi", "modularity_re"):
            assert run(name, t, t) == 0.0, name


def test_measures_follow_pgb_formulas():
    for a, b in [(3.0, 5.0), (0.0, 0.0), (0.0, 2.0), (-0.2, 0.1), (1.0, float("inf"))]:
        assert q.relative_error(a, b) == pgb_rel(a, b)
    assert q.relative_error(0.0, 2.0) == pytest.approx(2e15)  # a zero truth
    rng = np.random.default_rng(0)
    for _ in range(5):
        a, b = rng.integers(0, 9, rng.integers(1, 8)), rng.integers(0, 9, rng.integers(1, 8))
        a[0] += 1
        b[0] += 1
        assert q.kl_divergence(a, b) == pytest.approx(pgb_kl(a, b), rel=1e-12)
    eps = np.finfo(np.float64).eps  # a bin the release misses costs p log(p / eps)
    assert q.kl_divergence([1, 1], [1]) == pytest.approx(
        0.5 * math.log(0.5) + 0.5 * math.log(0.5 / eps), rel=1e-9)
    assert q.top_mae([0.1, 0.9, 0.5], [0.8, 0.2, 0.3], 2) == pytest.approx(0.15)


def test_louvain_modularity_and_nmi():
    t = karate()
    r = dropped(t, 0.2, seed=2)
    part = q.louvain_partition(t, rng=np.random.default_rng(0))
    communities = [set(np.flatnonzero(part == c).tolist()) for c in np.unique(part)]
    expected = nx.community.modularity(nx_of(t), communities)
    assert q.modularity(t, part) == pytest.approx(expected, rel=1e-12)
    # Louvain's optimum on karate is about 0.42 (Blondel et al.; networkx's finds the same)
    assert q.modularity(t, part) > 0.40
    # the release's partition comes from the metric's rng, the truth's from a fixed seed
    pt = q.louvain_partition(t, rng=np.random.default_rng(q.TRUTH_SEED))
    pr = q.louvain_partition(r, rng=np.random.default_rng(5))
    assert run("community_nmi", t, r, seed=5) == pytest.approx(pgb_nmi(pt, pr), rel=1e-9)
    assert run("modularity_re", t, r, seed=5) == pytest.approx(
        pgb_rel(q.modularity(t, pt), q.modularity(r, pr)), rel=1e-9)


def test_same_seed_same_number():
    t = random_graph()
    r = dropped(t, 0.3, seed=3)
    for name in ("community_nmi", "modularity_re"):
        a = run(name, t, r, seed=11)
        b = run(name, t, Graph.from_edges(r.edges(), n_nodes=r.n_nodes), seed=11)
        assert a == b


def test_sampled_paths_deterministic_and_close():
    g = Graph.from_edges(list(nx.connected_watts_strogatz_graph(3000, 6, 0.1, seed=1).edges()),
                         n_nodes=3000)
    exact = q.path_summary(g, rng=0)
    assert exact["exact"]
    s1 = q.path_summary(g, rng=np.random.default_rng(4), n_sources=256, exact_max_nodes=0)
    s2 = q.path_summary(g, rng=np.random.default_rng(4), n_sources=256, exact_max_nodes=0)
    assert not s1["exact"]
    assert np.array_equal(s1["hist"], s2["hist"]) and s1["diameter"] == s2["diameter"]
    assert s1["apl"] == pytest.approx(exact["apl"], rel=0.02)
    assert s1["diameter"] <= exact["diameter"]
    assert s1["diameter"] >= exact["diameter"] - 1
    assert q.kl_divergence(exact["hist"], s1["hist"]) < 1e-3
    assert s1["hist"][0] == pytest.approx(g.n_nodes)  # scaled by n / sources
    # the metrics sample with a fixed seed: a release on as many nodes gets the same sources
    r = dropped(g, 0.1, seed=5)
    paired = q.path_summary(r, rng=np.random.default_rng(4), n_sources=256, exact_max_nodes=0)
    exact_r = q.path_summary(r, rng=0)
    assert q.kl_divergence(s1["hist"], paired["hist"]) == pytest.approx(
        q.kl_divergence(exact["hist"], exact_r["hist"]), rel=0.2)


def test_distance_histogram_matches_networkx():
    t = random_graph()
    hist = q.path_summary(t, rng=0)["hist"]
    assert np.array_equal(hist, pgb_distance_distribution(nx_of(t)))


def test_empty_release():
    t = karate()
    empty = Graph.from_edges(np.zeros((0, 2), int), n_nodes=t.n_nodes)
    got = {name: run(name, t, empty) for name in q.PGB_QUERIES}
    assert got["nodes_re"] == 0.0
    for name in ("edges_re", "triangles_re", "avg_degree_re", "degree_variance_re",
                 "diameter_re", "global_clustering_re", "avg_clustering_re", "modularity_re"):
        assert got[name] == pytest.approx(1.0), name
    assert got["avg_shortest_path_re"] == math.inf  # PGB: mean distance of no pair is inf
    assert math.isnan(got["assortativity_re"])  # assortativity of no edge is undefined
    assert got["degree_kl"] > 0 and got["distance_kl"] > 0
    assert 0.0 <= got["community_nmi"] <= 1.0
    # every node alone, centrality 1/sqrt(n) as networkx gives
    top = np.sort(list(nx.eigenvector_centrality(nx_of(t), max_iter=10000).values()))[-1]
    assert got["eigenvector_mae"] == pytest.approx(top - 1 / math.sqrt(34), rel=1e-6)


def test_zero_triangle_truth():
    tree = Graph.from_edges(list(nx.balanced_tree(2, 5).edges()), n_nodes=63)
    assert run("triangles_re", tree, tree) == 0.0
    assert run("global_clustering_re", tree, tree) == 0.0
    closed = Graph.from_edges(np.vstack([tree.edges(), [[1, 2]]]), n_nodes=63)
    assert run("triangles_re", tree, closed) == pytest.approx(1e15)  # |0 - 1| / 1e-15


def test_disconnected():
    # a path of 6 nodes, a triangle and two isolated nodes
    g = Graph.from_edges([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (6, 7), (7, 8), (8, 6)],
                         n_nodes=11)
    s = q.path_summary(g, rng=0)
    assert s["diameter"] == 5 == pgb_diameter(nx_of(g))
    assert s["apl"] == pytest.approx(pgb_apl(nx_of(g)))
    assert s["hist"][0] == 11
    ev = q.eigenvector_centrality(g)
    ref = nx.eigenvector_centrality(nx_of(g), max_iter=10000)
    assert np.allclose(ev, [ref[i] for i in range(11)], atol=1e-12)


def test_other_node_counts():
    t = karate()
    bigger = Graph.from_edges(t.edges(), n_nodes=40)
    assert run("nodes_re", t, bigger) == pytest.approx(6 / 34)
    assert math.isnan(run("community_nmi", t, bigger))  # not the same people: undefined
    with pytest.raises(PrivpubError):
        run("edges_re", t, np.zeros(3))


def test_triangles_match_networkx():
    g = Graph.from_edges(list(nx.powerlaw_cluster_graph(500, 4, 0.5, seed=2).edges()),
                         n_nodes=500)
    tri = nx.triangles(nx_of(g))
    assert np.array_equal(q.triangles_per_node(g), [tri[i] for i in range(500)])
