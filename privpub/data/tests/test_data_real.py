"""Every real dataset loads with the counts registered in privpub/data (needs PRIVPUB_DATA_DIR).

Skipped, with the reason, when PRIVPUB_DATA_DIR is unset or not a directory. The three
largest graphs are marked ``slow`` (deselect with ``-m "not slow"``).
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from privpub.data import dataset_names, get_dataset_spec, load_dataset
from privpub.types import Graph, Kind, Table

pytestmark = pytest.mark.data

_DIR = os.environ.get("PRIVPUB_DATA_DIR", "")
_SKIP = (
    "PRIVPUB_DATA_DIR is not set" if not _DIR
    else f"PRIVPUB_DATA_DIR={_DIR} is not a directory" if not Path(_DIR).is_dir()
    else None
)
needs_data = pytest.mark.skipif(_SKIP is not None, reason=f"real data unavailable: {_SKIP}")

_SLOW = {"dblp", "twitter", "web_notredame", "dblp_binary", "notredame_binary"}
_REAL = [n for n in dataset_names()
         if not (get_dataset_spec(n).synthetic or get_dataset_spec(n).user_file)]


def _param(name):
    return pytest.param(name, marks=[pytest.mark.slow] if name in _SLOW else [], id=name)


_GRAPHS = [_param(n) for n in _REAL if get_dataset_spec(n).kind == Kind.GRAPH]
_TABLES = [_param(n) for n in _REAL if get_dataset_spec(n).kind == Kind.TABLE]
_MATRICES = [_param(n) for n in _REAL if get_dataset_spec(n).kind == Kind.BINARY_MATRIX]

#: Maximum degrees reported by the papers (day2016 Table 1 for LCCs, qardaji2012 Table 1,
#: farias2021 Sec. 6.1): a check that the files are read as the papers read them.
_MAX_DEGREE = {
    "facebook": 1045, "wiki_vote": 1065, "ca_hepph": 491, "email_enron": 1383,
    "cit_hepph": 846, "loc_brightkite": 1134, "twitter": 3383, "dblp": 343,
    "caltech36": 248, "georgetown15": 1235, "unc28": 3795, "musae_git": 9458,
}


def _assert_canonical(g: Graph):
    a = g.adjacency
    assert a.dtype == bool and a.has_sorted_indices
    assert (a != a.T).nnz == 0, "adjacency must be symmetric"
    assert a.diagonal().sum() == 0, "no self-loops"


@needs_data
@pytest.mark.parametrize("name", _GRAPHS)
def test_graph_counts(name):
    exp = get_dataset_spec(name).expected
    g = load_dataset(name)
    assert isinstance(g, Graph) and g.name == name
    assert (g.n_nodes, g.n_edges) == (exp["n_nodes"], exp["n_edges"])
    _assert_canonical(g)
    lcc = load_dataset(name, lcc=True)
    assert (lcc.n_nodes, lcc.n_edges) == (exp["lcc_nodes"], exp["lcc_edges"])
    if name in _MAX_DEGREE:
        assert lcc.degrees().max() == _MAX_DEGREE[name]


@needs_data
def test_lcc_is_connected_and_induced():
    from scipy.sparse.csgraph import connected_components

    g = load_dataset("wiki_vote", lcc=True)
    assert connected_components(g.adjacency, directed=False)[0] == 1
    _assert_canonical(g)


#: PGB's eight graphs as PGB's loader (utils.get_mat on its data/*.txt) reads them: every id
#: of the file is a node (self-loop-only ids too), the whole graph, direction and loops
#: dropped. Measured on PGB's copies, whose data lines equal ours.
_PGB_COUNTS = {
    "road_minnesota": (2642, 3303), "facebook": (4039, 88234), "wiki_vote": (7115, 100762),
    "ca_hepph": (12008, 118489), "p2p_gnutella25": (22687, 54705),
    "econ_poli_large": (15575, 17468), "pgb_er": (10000, 250278), "pgb_ba": (10000, 49975),
}


@needs_data
@pytest.mark.parametrize("name", sorted(_PGB_COUNTS))
def test_pgb_graphs_load_as_pgb_loads_them(name):
    g = load_dataset(name, loop_nodes=True)
    assert (g.n_nodes, g.n_edges) == _PGB_COUNTS[name]
    _assert_canonical(g)
    plain = load_dataset(name)
    assert plain.n_edges == g.n_edges
    if name == "ca_hepph":  # ids 23799 and 40263 occur only on self-loop lines
        assert plain.n_nodes == g.n_nodes - 2
        assert np.flatnonzero(g.degrees() == 0).size == 2
    else:
        assert plain.n_nodes == g.n_nodes and g.degrees().min() > 0


@needs_data
def test_cit_hepph_is_relabelled_in_snap_id_order():
    # SNAP id 9907233 cites 6056 per the id map's own example; both must exist and the
    # node order must follow SNAP's ids, so vertex 0 is the smallest SNAP id (1001).
    import pandas as pd

    ids = pd.read_csv(Path(_DIR) / "cit-HepPh" / "arxiv-cit-hep-ph-ids.csv")
    snap_sorted = np.sort(ids["NODE_ID"].to_numpy())
    assert snap_sorted[0] == 1001
    g = load_dataset("cit_hepph")
    # degrees in the LG file's numbering, permuted to SNAP order, must equal ours
    from privpub.data.readers import read_lg

    n, directed, edges = read_lg(Path(_DIR) / "cit-HepPh" / "arxiv-cit-hep-ph.jlg")
    assert directed and n == g.n_nodes
    raw = Graph.from_edges(edges[edges[:, 0] != edges[:, 1]], n)
    vertex_of_rank = ids["ARTICLE_ID"].to_numpy()[np.argsort(ids["NODE_ID"].to_numpy())] - 1
    np.testing.assert_array_equal(g.degrees(), raw.degrees()[vertex_of_rank])


@needs_data
@pytest.mark.parametrize("name", _TABLES)
def test_table_counts(name):
    exp = get_dataset_spec(name).expected
    t = load_dataset(name)
    assert isinstance(t, Table)
    assert t.data.shape == (exp["n_rows"], exp["n_cols"])
    assert list(t.data.columns) == t.schema.names
    for attr in t.schema.attributes:
        col = t.data[attr.name]
        if attr.kind == "numeric":
            lo, hi = attr.domain
            assert col.min() >= lo and col.max() <= hi, attr.name
        else:
            assert set(col.dropna().unique()) <= set(attr.domain), attr.name


@needs_data
def test_adult_schema_and_splits():
    t = load_dataset("adult")
    s = t.schema
    assert s.class_attribute == "income"
    assert s["education"].kind == "ordinal"
    assert s["education"].domain[:3] == ("Preschool", "1st-4th", "5th-6th")
    assert s["education"].domain[-1] == "Doctorate"
    numeric = {a.name for a in s.attributes if a.kind == "numeric"}
    assert numeric == {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                       "hours-per-week"}
    assert s["age"].domain == (17, 90)
    assert set(t.data["income"].unique()) == {"<=50K", ">50K"}
    assert not t.data.isna().any().any()
    # education's order agrees with education-num
    codes = t.data["education"].cat.codes.to_numpy()
    np.testing.assert_array_equal(codes + 1, t.data["education-num"].to_numpy())
    exp = get_dataset_spec("adult").expected
    test = load_dataset("adult", split="test")
    assert test.n_rows == exp["n_rows_test"]
    assert set(test.data["income"].unique()) == {"<=50K", ">50K"}
    assert load_dataset("adult", split="all").n_rows == exp["n_rows_all"]


@needs_data
@pytest.mark.parametrize("name", ["nltcs", "acs"])
def test_binary_tables(name):
    t = load_dataset(name)
    assert all(a.kind == "ordinal" and a.domain == (0, 1) for a in t.schema.attributes)
    assert t.schema.class_attribute == t.schema.names[-1]
    assert set(np.unique(t.data.to_numpy())) <= {0, 1}


@needs_data
@pytest.mark.parametrize("name", _MATRICES)
def test_binary_matrix_counts(name):
    exp = get_dataset_spec(name).expected
    m = load_dataset(name)
    assert isinstance(m, sp.csr_array) and m.dtype == np.int8
    assert m.shape == exp["shape"] and m.nnz == exp["nnz"]
    assert np.all(m.data == 1)


@needs_data
def test_adult_qardaji2012_attributes():
    full = load_dataset("adult")
    t = load_dataset("adult", attributes="qardaji2012")
    assert t.n_rows == 30162 and len(t.schema.names) == 11  # qardaji2012 Sec. 4.2
    assert t.schema.class_attribute == "income"
    assert "fnlwgt" not in t.schema.names
    pd.testing.assert_frame_equal(t.data, full.data[t.schema.names])


@needs_data
def test_adult_binary_rows_match_adult_table():
    from privpub.data import ADULT_CATEGORICAL, one_hot

    for split in ("train", "test"):
        table = load_dataset("adult", split=split)
        m = load_dataset("adult_binary", split=split)
        assert m.shape[0] == table.n_rows
        np.testing.assert_array_equal(m.sum(axis=1), len(ADULT_CATEGORICAL))
        expected, names = one_hot(table, attributes=ADULT_CATEGORICAL)
        assert (m != expected).nnz == 0 and len(names) == m.shape[1]
        assert names[8] == "education=Preschool"


@needs_data
@pytest.mark.slow
def test_dblp_binary_is_the_adjacency():
    g = load_dataset("dblp")
    m = load_dataset("dblp_binary")
    assert (m != g.adjacency.astype(np.int8)).nnz == 0


@needs_data
@pytest.mark.slow
def test_notredame_binary_is_the_directed_web_graph():
    m = load_dataset("notredame_binary")
    assert m.diagonal().sum() == 0 and (m != m.T).nnz > 0  # directed, no self-links
    undirected = load_dataset("web_notredame").adjacency
    assert ((m + m.T) > 0).astype(bool).nnz == undirected.nnz
    assert (((m + m.T) > 0) != undirected).nnz == 0
