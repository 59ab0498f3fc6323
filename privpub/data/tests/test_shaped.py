"""The SNAP-shaped graphs: exact counts, a simple symmetric CSR, determinism, the cache."""

import json
import mmap

import numpy as np
import pytest

from privpub import cache
from privpub.data import load_dataset, shaped
from privpub.data.shaped import GraphShape, csr_graph, load_shaped
from privpub.data.shaped_build import shaped_degrees, shaped_graph
from privpub.errors import DataError, PrivpubError
from privpub.types import Graph


@pytest.mark.parametrize(("n", "m", "d_max", "seed"), [
    (50, 120, 20, 0), (1000, 5000, 200, 1), (3000, 40_000, 900, 2), (20_000, 150_000, 900, 3),
    (400, 60_000, 399, 4),  # dense: the repair and the exact finish do most of the work
])
def test_shaped_graph_has_exactly_the_counts_and_is_a_simple_graph(n, m, d_max, seed):
    indptr, indices = shaped_graph(n, m, d_max, exponent=2.3, rng=np.random.default_rng(seed))
    assert indptr.dtype == indices.dtype == np.int32
    g = csr_graph(indptr, indices)
    degrees = g.degrees()
    assert (g.n_nodes, g.n_edges, degrees.max(), degrees[0]) == (n, m, d_max, d_max)
    assert (degrees[1:] < d_max).all()
    # the same adjacency, down to the index order, as the reference constructor builds
    reference = Graph.from_edges(g.edges(), n).adjacency
    assert np.array_equal(reference.indptr, indptr)
    assert np.array_equal(reference.indices, indices)


def test_shaped_graph_is_a_function_of_the_seed():
    a = shaped_graph(2000, 10_000, 300, exponent=2.3, rng=np.random.default_rng(7))
    b = shaped_graph(2000, 10_000, 300, exponent=2.3, rng=np.random.default_rng(7))
    c = shaped_graph(2000, 10_000, 300, exponent=2.3, rng=np.random.default_rng(8))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[1], c[1])


def test_shaped_degrees_sum_to_twice_the_edges_with_a_heavy_tail():
    d = shaped_degrees(100_000, 800_000, 5000, exponent=2.3, rng=np.random.default_rng(0))
    assert d.sum() == 1_600_000 and d[0] == 5000 and d.min() >= 1 and (d[1:] < 5000).all()
    assert np.median(d) < d.mean() / 2 < d.max() / 100  # heavy-tailed, not Poisson-like


def test_impossible_counts_are_refused():
    with pytest.raises(PrivpubError, match="no simple graph"):
        shaped_graph(10, 50, 5, exponent=2.3, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError, match="no simple graph"):
        shaped_graph(10, 20, 10, exponent=2.3, rng=np.random.default_rng(0))


@pytest.fixture
def tiny_shape(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    shape = GraphShape("tiny_like", 500, 3000, 120, "a test")
    monkeypatch.setitem(shaped.SHAPES, "tiny_like", shape)
    return tmp_path


def _mapped(array) -> bool:
    """Whether ``array`` is a view of a memory-mapped file."""
    while array is not None:
        if isinstance(array, (np.memmap, mmap.mmap)):
            return True
        array = getattr(array, "base", None)
    return False


def test_load_builds_once_then_memory_maps_the_cached_csr(tiny_shape, capsys):
    first = load_shaped("tiny_like", seed=3)
    assert "building tiny_like" in capsys.readouterr().err
    (folder,) = (tiny_shape / "graphs").iterdir()
    build = json.loads((folder / "build.json").read_text())
    assert build["n_edges"] == 3000 and build["seconds"] >= 0 and build["process_peak_mb"] > 0
    second = load_shaped("tiny_like", seed=3)
    assert capsys.readouterr().err == ""
    assert _mapped(second.adjacency.indices) and _mapped(second.adjacency.indptr)
    assert not _mapped(first.adjacency.data)
    assert (first.adjacency != second.adjacency).nnz == 0
    assert load_shaped("tiny_like", seed=4).n_edges == 3000
    assert len(list((tiny_shape / "graphs").iterdir())) == 2


def test_an_unreadable_cache_entry_names_its_folder(tiny_shape):
    load_shaped("tiny_like", progress=False)
    (folder,) = (tiny_shape / "graphs").iterdir()
    (folder / "indices.npy").write_bytes(b"not an array")
    with pytest.raises(DataError, match="delete the folder"):
        load_shaped("tiny_like")


def test_cache_off_builds_in_memory(monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, "off")
    monkeypatch.setitem(shaped.SHAPES, "tiny_like", GraphShape("tiny_like", 300, 900, 60, "a test"))
    g = load_shaped("tiny_like", progress=False)
    assert (g.n_nodes, g.n_edges, g.degrees().max()) == (300, 900, 60)


@pytest.mark.parametrize("name", sorted(shaped.SHAPES))
def test_a_fraction_of_a_registered_shape_loads_by_name(name, tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    g = load_dataset(name, fraction=0.002)
    want = shaped.SHAPES[name].scaled(0.002, 2.3)
    assert (g.n_nodes, g.n_edges, g.degrees().max()) == (
        want.n_nodes, want.n_edges, want.max_degree)
    assert g.name == name and g.n_edges == round(shaped.SHAPES[name].n_edges * 0.002)


def test_registered_shapes_and_bad_options():
    for name, (n, m) in {"livejournal_like": (3_997_962, 34_681_189),
                         "orkut_like": (3_072_441, 117_185_083)}.items():
        spec = shaped.SHAPES[name]
        assert (spec.n_nodes, spec.n_edges) == (n, m)
    with pytest.raises(PrivpubError, match="exponent must be > 2"):
        load_dataset("livejournal_like", exponent=2.0)
    with pytest.raises(PrivpubError, match="seed must be >= 0"):
        load_dataset("orkut_like", seed=-1)
    with pytest.raises(PrivpubError, match=r"fraction must be in \(0, 1\]"):
        load_dataset("orkut_like", fraction=0)
    with pytest.raises(PrivpubError, match="leaves 3 nodes"):
        load_dataset("orkut_like", fraction=1e-6)
