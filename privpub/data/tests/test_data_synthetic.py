"""Synthetic generators: shapes, seeding, parameter checks, empirical densities; and the
Hydra dataset configs (conf/dataset/*.yaml) against the registry."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from privpub.data import (
    bipartite_sbm,
    chung_lu,
    dataset_names,
    gaussian_1d,
    gaussian_mixture,
    get_dataset_spec,
    load_dataset,
    shaped,
)
from privpub.data.synthetic import sample_distinct
from privpub.errors import PrivpubError
from privpub.types import Graph, Table

# the SNAP-shaped graphs take a minute and gigabytes to build: test_shaped.py checks them scaled
_SYNTHETIC = [n for n in dataset_names()
              if get_dataset_spec(n).synthetic and n not in shaped.SHAPES]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _same(a, b) -> bool:
    if isinstance(a, Graph):
        return (a.adjacency != b.adjacency).nnz == 0
    if isinstance(a, Table):
        return a.data.equals(b.data)
    return (a != b).nnz == 0


@pytest.mark.parametrize("name", _SYNTHETIC)
def test_registered_synthetic_datasets_are_seeded(name):
    a = load_dataset(name, rng=_rng(7))
    b = load_dataset(name, rng=np.random.default_rng(np.random.SeedSequence(7)))
    assert _same(a, b)
    exp = get_dataset_spec(name).expected
    if isinstance(a, Graph):
        assert a.n_nodes == exp["n_nodes"]
        if "n_edges" in exp:
            assert a.n_edges == exp["n_edges"]
    elif isinstance(a, Table):
        assert a.data.shape == (exp["n_rows"], exp["n_cols"])
    else:
        assert isinstance(a, sp.csr_array) and a.dtype == np.int8 and a.shape == exp["shape"]


def test_different_seeds_differ():
    assert not _same(load_dataset("sbm_small", rng=_rng(1)), load_dataset("sbm_small", rng=_rng(2)))
    assert not _same(load_dataset("chung_lu", rng=_rng(1), n=500),
                     load_dataset("chung_lu", rng=_rng(2), n=500))


def test_options_override_defaults():
    m = load_dataset("sbm_epasto", rng=_rng(), n_rows=256)
    assert m.shape == (256, 1024)
    t = load_dataset("gaussian_1d", rng=_rng(), n=123, mean=0.0, std=1.0)
    assert t.n_rows == 123 and abs(t.data["x"].mean()) < 0.5


def test_gaussian_1d():
    t = gaussian_1d(rng=_rng())
    x = t.data["x"].to_numpy()
    assert t.schema.names == ["x"] and t.schema["x"].kind == "numeric"
    assert t.schema["x"].domain == (50 - 125, 50 + 125)
    assert x.size == 10_000 and abs(x.mean() - 50) < 1.5 and abs(x.std() - 25) < 1.0
    assert stats.kstest(x, "norm", args=(50, 25)).pvalue > 1e-3


def test_gaussian_mixture():
    t = gaussian_mixture(rng=_rng(), n=30_000)
    df = t.data
    assert list(df.columns) == ["x0", "x1", "x2", "x3", "x4", "component"]
    assert t.schema.class_attribute == "component"
    assert t.schema["component"].domain == (0, 1, 2)
    counts = df["component"].value_counts().sort_index().to_numpy()
    assert np.all(np.abs(counts - 10_000) < 500)
    x = df[["x0", "x1", "x2", "x3", "x4"]].to_numpy()
    comp = df["component"].to_numpy().astype(int)
    means = np.array([x[comp == c].mean(axis=0) for c in range(3)])
    np.testing.assert_allclose(means, [[20] * 5, [50] * 5, [80] * 5], atol=0.5)
    covs = [np.cov(x[comp == c].T) for c in range(3)]
    # different covariances: std 6, 9, 12 and correlation 0, 0.25, 0.5
    np.testing.assert_allclose([np.sqrt(c[0, 0]) for c in covs], [6, 9, 12], rtol=0.05)
    np.testing.assert_allclose([c[0, 1] / c[0, 0] for c in covs], [0, 0.25, 0.5], atol=0.05)
    assert comp[:50].tolist() != sorted(comp[:50].tolist())  # rows are shuffled


def test_gaussian_mixture_custom_and_errors():
    t = gaussian_mixture(rng=_rng(), n=100, dim=2, n_components=2, weights=[1, 0],
                         means=[[0, 0], [10, 10]], covariances=[np.eye(2), np.eye(2)])
    assert (t.data["component"] == 0).all()
    with pytest.raises(PrivpubError, match="positive definite"):
        gaussian_mixture(rng=_rng(), dim=2, n_components=1, covariances=[[[1, 2], [2, 1]]])
    with pytest.raises(PrivpubError, match="means"):
        gaussian_mixture(rng=_rng(), means=np.zeros((2, 5)))
    with pytest.raises(PrivpubError, match="weights"):
        gaussian_mixture(rng=_rng(), weights=[1, -1, 1])


@pytest.mark.parametrize(
    "n_rows, n_cols, block, p_in, p_out",
    [(1024, 1024, 64, 0.8, 0.01), (300, 200, 64, 0.5, 0.1), (128, 128, 16, 1.0, 0.0)],
)
def test_bipartite_sbm_densities(n_rows, n_cols, block, p_in, p_out):
    m = bipartite_sbm(n_rows=n_rows, n_cols=n_cols, block_size=block, p_in=p_in,
                      p_out=p_out, rng=_rng(3))
    assert m.shape == (n_rows, n_cols) and m.dtype == np.int8 and np.all(m.data == 1)
    rows, cols = m.nonzero()
    inside = rows // block == cols // block
    n_in_cells = sum(
        min(block, n_rows - i) * min(block, max(n_cols - i, 0)) for i in range(0, n_rows, block)
    )
    n_out_cells = n_rows * n_cols - n_in_cells
    for got, cells, p in ((inside.sum(), n_in_cells, p_in), ((~inside).sum(), n_out_cells, p_out)):
        sd = np.sqrt(cells * p * (1 - p))
        assert abs(got - cells * p) <= 5 * sd + 1e-9, (got, cells * p)


def test_bipartite_sbm_large_is_sparse():
    m = bipartite_sbm(n_rows=200_000, n_cols=100_000, block_size=1000, p_in=0.01,
                      p_out=1e-5, rng=_rng())
    expected = 100 * 1000 * 1000 * 0.01 + (2e10 - 1e8) * 1e-5
    assert abs(m.nnz - expected) < 5 * np.sqrt(expected)


def test_bipartite_sbm_rejects_bad_parameters():
    good = dict(n_rows=10, n_cols=10, block_size=5, p_in=0.5, p_out=0.1)
    for key, bad in [("n_rows", 0), ("block_size", 2.5), ("p_in", 1.5), ("p_out", -0.1),
                     ("p_in", "x")]:
        with pytest.raises(PrivpubError, match=key):
            bipartite_sbm(**{**good, key: bad}, rng=_rng())


def test_sample_distinct_is_uniform_and_distinct():
    rng = _rng()
    for n, k in [(10, 10), (10, 3), (10**9, 1000), (3 * 10**6, 10**6), (3 * 10**6, 2 * 10**6)]:
        s = sample_distinct(n, k, rng=rng)
        s = np.sort(s)
        assert s.size == k and np.all(np.diff(s) > 0) and s[0] >= 0 and s[-1] < n
    hits = np.bincount(np.concatenate([sample_distinct(2**21 + 1, 2**17, rng=rng)
                                       for _ in range(20)]) % 16, minlength=16)
    assert stats.chisquare(hits).pvalue > 1e-4
    with pytest.raises(PrivpubError):
        sample_distinct(3, 4, rng=rng)


def test_chung_lu_matches_expected_edges():
    n, gamma, d = 2000, 2.5, 8.0
    g = chung_lu(n=n, exponent=gamma, average_degree=d, rng=_rng(5))
    w = np.arange(1, n + 1) ** (-1 / (gamma - 1))
    w *= d * n / w.sum()
    p = np.minimum(1, np.outer(w, w) / w.sum())
    iu = np.triu_indices(n, 1)
    mean, var = p[iu].sum(), (p[iu] * (1 - p[iu])).sum()
    assert abs(g.n_edges - mean) < 5 * np.sqrt(var)
    deg = g.degrees()
    assert deg[:10].mean() > 5 * deg.mean()  # heavy tail: the top weights are hubs
    # expected degree of node i is sum_j p_ij; check it for the first nodes
    exp_deg = p.sum(axis=1) - np.diag(p)
    assert abs(deg[:20].sum() - exp_deg[:20].sum()) < 5 * np.sqrt(exp_deg[:20].sum())


def test_chung_lu_rejects_bad_parameters():
    for kw, key in [({"exponent": 2.0}, "exponent"), ({"average_degree": 0}, "average_degree"),
                    ({"n": 1}, "n"), ({"average_degree": 50, "n": 10}, "average_degree")]:
        with pytest.raises(PrivpubError, match=key):
            chung_lu(**kw, rng=_rng())


def test_small_networkx_graphs():
    g = load_dataset("karate")
    assert (g.n_nodes, g.n_edges, g.name) == (34, 78, "karate")


# --------------------------------------------------------------------------- Hydra configs
_CONF = Path(__file__).resolve().parents[3] / "conf" / "dataset"
#: conf/dataset files that are not datasets (selectors of the experiment runner)
_NOT_DATASETS = {"all"}


def test_dataset_yaml_matches_registry():
    from omegaconf import OmegaConf

    files = {p.stem: p for p in _CONF.glob("*.yaml")}
    assert set(files) - _NOT_DATASETS == set(dataset_names())
    for name in dataset_names():
        text = files[name].read_text()
        assert text.startswith("# "), f"{name}.yaml must start with a comment line"
        cfg = OmegaConf.to_container(OmegaConf.load(files[name]))
        spec = get_dataset_spec(name)
        assert list(cfg) == ["name", *spec.defaults], name
        assert cfg["name"] == name
        for key, default in spec.defaults.items():
            assert cfg[key] == default and type(cfg[key]) is type(default), (name, key)
