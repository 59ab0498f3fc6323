"""Real graph datasets: SNAP, Facebook100, CAIDA, MUSAE, SuiteSparse, PGB files -> :class:`Graph`.

Every loader returns the *undirected simple* graph of the file: directed edges are
symmetrised, and duplicates and self-loops are dropped (:meth:`Graph.from_edges`). Node ids
are relabelled ``0..n-1`` in sorted order of the file's ids (for cit-HepPh, of SNAP's ids,
via the id map). For edge lists, the nodes are the ids on at least one non-loop edge (every
id of the file with ``loop_nodes=True``, as PGB's loader reads them); for
formats that declare the number of nodes (MatrixMarket, Graphs.jl LG, MATLAB) all declared
nodes are kept. The option ``lcc=True`` keeps the largest connected component, relabelled
in the same order (as day2016 does: "All graphs are connected").

Counts (``expected`` in each spec) were verified on the registered files (sha256). Where a
paper reports a different count, the description says why (usually: self-loops counted).

Download URLs: ``url`` is the publisher's official file or page; ``download_url`` is the
publisher's file when the stored copy is byte-identical to it, else the raw URL of the
pinned GitHub snapshot the stored copy was taken from (gzip-compressed here when the
stored name ends in ``.gz`` and the snapshot's does not).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from privpub.data.files import FileSpec
from privpub.data.readers import (
    WHITESPACE,
    read_edge_list,
    read_lg,
    read_mat_variable,
    read_matrix_market,
)
from privpub.data.registry import DatasetSpec, register_dataset
from privpub.errors import DataError, PrivpubError
from privpub.types import Graph, Kind

__all__ = ["graph_from_edge_list", "largest_connected_component"]

_RAW = "https://raw.githubusercontent.com"
_SNAP_LICENCE = (
    "SNAP dataset: publicly available for research without an explicit licence; cite the "
    "dataset's paper and SNAP (Leskovec & Krevl, 2014)."
)
_FB100_LICENCE = (
    "Facebook100 (Traud, Mucha & Porter, Physica A 2012): released to researchers without "
    "an explicit licence and later withdrawn at Facebook's request; research use only, do "
    "not redistribute."
)


# --------------------------------------------------------------------------- helpers
def _check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise PrivpubError(f"option {name} must be true or false, got {value!r}")
    return bool(value)


def _relabel(edges: np.ndarray) -> tuple[np.ndarray, int]:
    """Map the ids in ``edges`` to ``0..n-1`` in sorted id order; return (edges, n)."""
    if edges.size == 0:
        return edges.reshape(0, 2), 0
    top = int(edges.max())
    if top < 4 * edges.size + 1_000_000:  # dense enough ids: O(m + max id), no sort
        present = np.zeros(top + 1, dtype=bool)
        present[edges.ravel()] = True
        new_id = np.cumsum(present, dtype=np.int64) - 1
        return new_id[edges], int(new_id[-1] + 1)
    ids, inverse = np.unique(edges, return_inverse=True)
    return inverse.reshape(edges.shape), int(ids.size)


def graph_from_edge_list(edges, *, relabel: bool = True, n_nodes: int | None = None) -> Graph:
    """Undirected simple graph of an ``(m, 2)`` id array.

    Parameters
    ----------
    edges : array_like of int
        Node pairs; direction, duplicates and self-loops are dropped.
    relabel : bool
        Map the ids that occur on non-loop edges to ``0..n-1`` in sorted order (nodes that
        occur only in self-loops vanish). If False, ids must already be ``0..n_nodes-1``.
    n_nodes : int, optional
        Number of nodes when ``relabel`` is False (isolated nodes are kept).
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    edges = edges[edges[:, 0] != edges[:, 1]]
    if relabel:
        edges, n_nodes = _relabel(edges)
    return Graph.from_edges(edges, n_nodes)


def largest_connected_component(graph: Graph) -> Graph:
    """The largest connected component of ``graph``, nodes relabelled in their order.

    Ties between components of equal size go to the one holding the smallest node id.
    """
    n_comp, labels = connected_components(graph.adjacency, directed=False)
    if n_comp <= 1:
        return graph
    keep = np.flatnonzero(labels == np.bincount(labels).argmax())
    sub = graph.subgraph(keep)
    if not sub.adjacency.has_sorted_indices:
        sub.adjacency.sort_indices()
    return sub


def _finish(graph: Graph, lcc) -> Graph:
    return largest_connected_component(graph) if _check_bool(lcc, "lcc") else graph


# --------------------------------------------------------------------------- loaders
def _load_edge_list(paths, *, lcc: bool = False, loop_nodes: bool = False,
                    sep: str = WHITESPACE, n_columns: int = 2):
    """An edge list's graph; ``loop_nodes`` keeps the ids that occur only on self-loop
    lines, as isolated nodes (PGB's loader, ``utils.get_mat``, does)."""
    from privpub.data.edge_stream import graph_from_edge_file

    return graph_from_edge_file(paths[0], sep=sep, n_columns=n_columns,
                                loop_nodes=_check_bool(loop_nodes, "loop_nodes"),
                                lcc=_check_bool(lcc, "lcc"))


def _load_edge_list_in_memory(paths, *, lcc: bool = False, loop_nodes: bool = False,
                              sep: str = WHITESPACE, n_columns: int = 2):
    """:func:`_load_edge_list` through one int64 array and :meth:`Graph.from_edges` (the
    reference the streamed path is tested against)."""
    edges = read_edge_list(paths[0], sep=sep, n_columns=n_columns)[:, :2]
    if _check_bool(loop_nodes, "loop_nodes"):
        edges, n_nodes = _relabel(edges)
        return _finish(graph_from_edge_list(edges, relabel=False, n_nodes=n_nodes), lcc)
    return _finish(graph_from_edge_list(edges), lcc)


def _sniff_edge_list(path) -> tuple[str, int]:
    """(separator, number of columns) of an edge list, from its first data line: commas if
    it has one, else tabs/spaces; a header line of names is passed over."""
    from privpub.data.readers import _is_int, _lines, _split

    for line in _lines(path):
        text = line.split("#", 1)[0]
        if not text.strip():
            continue
        sep = "," if "," in text else WHITESPACE
        fields = _split(text, sep, "#")
        if any(_is_int(x) for x in fields):
            return sep, max(len(fields), 2)
    return WHITESPACE, 2


def _load_user_edge_list(*, path=None, sha256=None, lcc: bool = False, loop_nodes: bool = False,
                         sep: str | None = None, n_columns: int | None = None):
    """The user's own edge list (dataset ``edge_list``): like a registered SNAP file, with
    the separator and the number of columns read from its first data line unless given."""
    import dataclasses
    from pathlib import Path

    from privpub.data.edge_stream import graph_from_edge_file
    from privpub.data.files import user_file_sha256

    if not path:
        raise DataError("dataset 'edge_list' needs the path of the file: "
                        "load_dataset('/path/to/edges.txt.gz') or dataset.path=...")
    path = Path(str(path)).expanduser()
    user_file_sha256(path, expected=sha256)  # exists, and is the file the cells name
    lcc, loop_nodes = _check_bool(lcc, "lcc"), _check_bool(loop_nodes, "loop_nodes")
    found_sep, found_columns = _sniff_edge_list(path)
    if n_columns is not None and (isinstance(n_columns, bool) or not isinstance(n_columns, int)
                                  or n_columns < 2):
        raise PrivpubError(f"option n_columns must be an integer >= 2, got {n_columns!r}")
    graph = graph_from_edge_file(path, sep=sep or found_sep, n_columns=n_columns or found_columns,
                                 loop_nodes=loop_nodes, lcc=lcc)
    return dataclasses.replace(graph, name=path.name)


def _load_lg(paths, *, lcc: bool = False):
    n, _directed, edges = read_lg(paths[0])
    return _finish(graph_from_edge_list(edges, relabel=False, n_nodes=n), lcc)


def _load_lg_with_id_map(paths, *, lcc: bool = False):
    """LG file plus SNAPDatasets.jl's id map: relabel in sorted order of SNAP's ids."""
    n, _directed, edges = read_lg(paths[0])
    try:
        ids = pd.read_csv(paths[1], dtype=np.int64, engine="c")
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"malformed id map {paths[1]}: {exc}") from None
    if not {"NODE_ID", "ARTICLE_ID"} <= set(ids.columns):
        raise DataError(f"id map {paths[1]} needs columns NODE_ID and ARTICLE_ID, "
                        f"has {list(ids.columns)}")
    vertex = ids["ARTICLE_ID"].to_numpy() - 1
    snap_id = ids["NODE_ID"].to_numpy()
    if (len(ids) != n or vertex.min() != 0 or vertex.max() != n - 1
            or np.unique(vertex).size != n or np.unique(snap_id).size != n):
        raise DataError(f"id map {paths[1]} is not a one-to-one map of the {n} vertices "
                        f"of {paths[0]}")
    rank = np.empty(n, dtype=np.int64)
    rank[vertex[np.argsort(snap_id, kind="stable")]] = np.arange(n)
    return _finish(graph_from_edge_list(rank[edges], relabel=False, n_nodes=n), lcc)


def _load_matrix_market(paths, *, lcc: bool = False):
    (n_rows, n_cols), entries = read_matrix_market(paths[0])
    if n_rows != n_cols:
        raise DataError(f"{paths[0]}: an adjacency matrix must be square, got {n_rows} x {n_cols}")
    return _finish(graph_from_edge_list(entries, relabel=False, n_nodes=n_rows), lcc)


def _load_mat(paths, *, lcc: bool = False, variable: str = "A", field: str | None = None):
    a = read_mat_variable(paths[0], variable=variable, field=field)
    where = variable if field is None else f"{variable}.{field}"
    if not sp.issparse(a) or a.shape[0] != a.shape[1]:
        raise DataError(f"{paths[0]}: {where} is not a square sparse adjacency matrix")
    coo = sp.coo_array(a)
    nz = coo.data != 0
    edges = np.column_stack([coo.row[nz], coo.col[nz]]).astype(np.int64)
    return _finish(graph_from_edge_list(edges, relabel=False, n_nodes=a.shape[0]), lcc)


# --------------------------------------------------------------------------- catalogue
def _graph(name, description, files, loader, *, expected, papers=(), licence=_SNAP_LICENCE):
    # an edge list's loader also takes loop_nodes (formats that declare n keep every node)
    edge_list = getattr(loader, "func", loader) is _load_edge_list
    defaults = {"lcc": False, **({"loop_nodes": False} if edge_list else {})}
    register_dataset(DatasetSpec(
        name=name, kind=Kind.GRAPH, description=description, files=tuple(files),
        licence=licence, expected=expected, defaults=defaults, papers=tuple(papers),
        loader=loader,
    ))


register_dataset(DatasetSpec(
    name="edge_list", kind=Kind.GRAPH, user_file=True,
    description="Your own edge list: the file named by the option path (SNAP's format: "
                "'#' comments, one 'u v' pair per line separated by tabs/spaces or commas, "
                "optionally a header line, extra columns ignored; plain or gzip), loaded "
                "like the registered SNAP files. load_dataset('/path/edges.txt.gz') and "
                "python run.py dataset=/path/edges.txt.gz name it directly; its sha256 keys "
                "its results.",
    licence="The user's own data.",
    defaults={"path": None, "sha256": None, "lcc": False, "loop_nodes": False, "sep": None,
              "n_columns": None},
    loader=_load_user_edge_list,
))


def _counts(n, m, lcc_n=None, lcc_m=None):
    return {"n_nodes": n, "n_edges": m, "lcc_nodes": lcc_n or n, "lcc_edges": lcc_m or m}


_graph(
    "facebook",
    "SNAP ego-Facebook, all ten ego networks combined (facebook_combined; McAuley & "
    "Leskovec, NIPS 2012): 4,039 users, 88,234 friendships, connected. Used by day2016 "
    "(Table 1: 4,039 / 88,234).",
    [FileSpec("facebook_combined/facebook_combined.txt.gz",
              "7cc432d08910b3a940ce90f7da94c13aaf048b04724eafcdf3050b28acc49daf",
              "https://snap.stanford.edu/data/facebook_combined.txt.gz", 218575,
              download_url="https://snap.stanford.edu/data/facebook_combined.txt.gz",
              content_sha256="f41c026ed8af3cc3359f1ca5573d0605fb09ae0eefa34544b820fd8c6e2ef296",
              source="SNAP's own file (copy: AllenDowney/ThinkComplexity2 @ f0417b35ca26 : "
                     "data/facebook_combined.txt.gz)")],
    _load_edge_list, expected=_counts(4039, 88234), papers=("day2016",),
)

_graph(
    "wiki_vote",
    "SNAP wiki-Vote: Wikipedia adminship votes until January 2008 (Leskovec, Huttenlocher "
    "& Kleinberg, CHI 2010), 103,689 directed votes, symmetrised: 7,115 nodes / 100,762 "
    "edges; LCC 7,066 / 100,736. Used by day2016 (Table 1 gives the LCC: use lcc=true).",
    [FileSpec("wiki-Vote/Wiki-Vote.txt",
              "6f371ed427cc96f636580561da94c8f4ba823113da703cd491c0b0e05c6aa696",
              "https://snap.stanford.edu/data/wiki-Vote.txt.gz", 1095059,
              download_url=f"{_RAW}/joshua-benabou/Strongly-Connected-Components-and-DBSCAN/"
                           "4f432dbbdc213568b6c9fcfdc766a7f1ebe35c9a/Wiki-Vote.txt",
              source="joshua-benabou/Strongly-Connected-Components-and-DBSCAN @ 4f432dbbdc21 "
                     ": Wiki-Vote.txt")],
    _load_edge_list, expected=_counts(7115, 100762, 7066, 100736), papers=("day2016",),
)

_graph(
    "ca_hepph",
    "SNAP ca-HepPh: arXiv High Energy Physics co-authorship (Leskovec, Kleinberg & "
    "Faloutsos, TKDD 2007), every edge stored in both directions, 32 self-loops (dropped): "
    "12,006 nodes / 118,489 edges; LCC 11,204 / 117,619. Used by day2016, whose Table 1 "
    "(LCC 11,204 / 117,649) counts the 30 self-loops inside the LCC as edges.",
    [FileSpec("ca-HepPh/CA-HepPh.txt.gz",
              "c003beaecea3d84ebc6bd790d1d087c97a9be6f9a0bbd970b1b4d016bfae70da",
              "https://snap.stanford.edu/data/ca-HepPh.txt.gz", 794521,
              download_url=f"{_RAW}/romikps/link-prediction-project/"
                           "74c5cd677a4c6dc7d545bae0440c38eed1dbddd8/CA-HepPh.txt",
              transform="gzip",
              content_sha256="5bbee86f4a5964286fa43e7dcd32acf1b6621b66e5b050968e61cef999affca3",
              source="romikps/link-prediction-project @ 74c5cd677a4c : CA-HepPh.txt "
                     "(LF line ends, header line without '#'; same data lines as SNAP's)")],
    _load_edge_list, expected=_counts(12006, 118489, 11204, 117619), papers=("day2016",),
)

_graph(
    "email_enron",
    "SNAP email-Enron: Enron e-mail communication (Klimt & Yang, CEAS 2004; Leskovec et "
    "al., Internet Mathematics 2009), 36,692 nodes / 183,831 edges; LCC 33,696 / 180,811. "
    "Used by qardaji2012 (Table 1, whole graph), farias2021 (whole graph) and day2016 "
    "(Table 1, LCC: use lcc=true).",
    [FileSpec("email-Enron/email-Enron.txt.gz",
              "e4611471ed181699b36e2aafc313e077fb25d16ed67ec5a81591eb8d8b40a5bc",
              "https://snap.stanford.edu/data/email-Enron.txt.gz", 1054970,
              download_url="https://snap.stanford.edu/data/email-Enron.txt.gz",
              content_sha256="ea392d7a4cc24e0d43c16b078939e92aeb2950b6bbb14605dd31856a27273a82",
              source="SNAP's own file (copy: jongwook/graphdb-benchmarks @ 68f79fe30d1b : "
                     "data/email-Enron.txt.gz)")],
    _load_edge_list, expected=_counts(36692, 183831, 33696, 180811),
    papers=("qardaji2012", "farias2021", "day2016"),
)

_graph(
    "cit_hepph",
    "SNAP cit-HepPh: arXiv HEP-PH citation graph (KDD Cup 2003; Leskovec, Kleinberg & "
    "Faloutsos, KDD 2005), 421,578 directed citations incl. 44 self-loops, read from "
    "SNAPDatasets.jl's LG file and relabelled in sorted order of SNAP's ids via its id map: "
    "34,546 nodes / 420,877 edges; LCC 34,401 / 420,784. Used by day2016, whose Table 1 "
    "(LCC 34,401 / 420,828) counts the 44 self-loops as edges.",
    [FileSpec("cit-HepPh/arxiv-cit-hep-ph.jlg",
              "817dfd8b3c98ee4eee1e1ff5e98986e49fe9727ec233436915ec7f254a2e9684",
              "https://snap.stanford.edu/data/cit-HepPh.txt.gz", 1245675,
              download_url=f"{_RAW}/JuliaGraphs/SNAPDatasets.jl/"
                           "dadd14a69b908d3dfc824d7c9f8c04f6fda72e59/data/arxiv_cit/"
                           "arxiv-cit-hep-ph.jlg",
              content_sha256="087aa1358a4dd5db687a22c11f583b59cf6c84aa92d2b36087d579f9431edca7",
              source="JuliaGraphs/SNAPDatasets.jl @ dadd14a69b90 : "
                     "data/arxiv_cit/arxiv-cit-hep-ph.jlg (Graphs.jl LG format, gzip)"),
     FileSpec("cit-HepPh/arxiv-cit-hep-ph-ids.csv",
              "072800871f519ade456603511084f28a7cc43f974c7e262c280cca0f65de9421",
              "https://snap.stanford.edu/data/cit-HepPh.html", 452814,
              download_url=f"{_RAW}/JuliaGraphs/SNAPDatasets.jl/"
                           "dadd14a69b908d3dfc824d7c9f8c04f6fda72e59/data/arxiv_cit/"
                           "arxiv-cit-hep-ph-ids.csv",
              source="JuliaGraphs/SNAPDatasets.jl @ dadd14a69b90 : "
                     "data/arxiv_cit/arxiv-cit-hep-ph-ids.csv")],
    _load_lg_with_id_map, expected=_counts(34546, 420877, 34401, 420784), papers=("day2016",),
)

_graph(
    "loc_brightkite",
    "SNAP loc-Brightkite friendship graph (Cho, Myers & Leskovec, KDD 2011), in "
    "SuiteSparse's lower-triangle layout (1-based ids = SNAP ids + 1): 58,228 nodes / "
    "214,078 edges; LCC 56,739 / 212,945. Used by day2016 (Table 1, LCC: use lcc=true).",
    [FileSpec("loc-brightkite_edges/data_214078.txt.gz",
              "c8d549ab81dfc66c97e1f7e0e0c342788884932ac1da4225a5f1755714033c8a",
              "https://snap.stanford.edu/data/loc-brightkite_edges.txt.gz", 678155,
              download_url=f"{_RAW}/harp-lab/MNMGDatalog/"
                           "7e2bb09a041b2967a3a047b06b88d2f7f3f60d55/data/data_214078.txt",
              transform="gzip",
              content_sha256="cc2eebc46f5c1ecd84122d5b02fde29d5b534226a214a7ea6608401815f29a16",
              source="harp-lab/MNMGDatalog @ 7e2bb09a041b : data/data_214078.txt")],
    _load_edge_list, expected=_counts(58228, 214078, 56739, 212945), papers=("day2016",),
)

_graph(
    "twitter",
    "SNAP ego-Twitter (twitter_combined; McAuley & Leskovec, NIPS 2012), undirected "
    "version from SNAPDatasets.jl (user ids and directions are not recoverable), 14 "
    "self-loops dropped: 81,306 nodes / 1,342,296 edges, connected. Used by day2016, whose "
    "Table 1 (1,342,310 edges) counts the self-loops.",
    [FileSpec("twitter_combined/ego-twitter-undirected.jlg",
              "7f81dda501ad839152246ff328db8108d84b9646534a7236726e8f7e62ef6d11",
              "https://snap.stanford.edu/data/twitter_combined.txt.gz", 3366507,
              download_url=f"{_RAW}/JuliaGraphs/SNAPDatasets.jl/"
                           "dadd14a69b908d3dfc824d7c9f8c04f6fda72e59/data/ego-twitter/"
                           "ego-twitter-undirected.jlg",
              content_sha256="b05b41bf0f9e78a9af6ddfb927f82d40d7f8e4cc724bea316db1513b8eeb6cfa",
              source="JuliaGraphs/SNAPDatasets.jl @ dadd14a69b90 : "
                     "data/ego-twitter/ego-twitter-undirected.jlg (Graphs.jl LG format, gzip)")],
    _load_lg, expected=_counts(81306, 1342296), papers=("day2016",),
)

_graph(
    "dblp",
    "SNAP com-DBLP co-authorship graph (com-dblp.ungraph; Yang & Leskovec, ICDM 2012), "
    "CDlib's copy of SNAP's data lines: 317,080 nodes / 1,049,866 edges, connected. Used by "
    "day2016 (Table 1), farias2021 (top-k influential nodes) and, as a users x users "
    "matrix, by epasto2022 (see dblp_binary).",
    [FileSpec("com-dblp/dblp.csv.gz",
              "6b64a23e60083fa52d64320a2cd4366ff1b33d8a89ac4fa1b30f159e88c1730c",
              "https://snap.stanford.edu/data/bigdata/communities/com-dblp.ungraph.txt.gz",
              4138279,
              download_url=f"{_RAW}/GiulioRossetti/cdlib_datasets/"
                           "ab0c4710a2303ba39dae278cb452fe10c4e75f64/networks/dblp.csv.gz",
              content_sha256="d98b4fc436446c28e452071813cf205e39f333e74e79a286a4b8edabe5ff680e",
              source="GiulioRossetti/cdlib_datasets @ ab0c4710a230 : networks/dblp.csv.gz "
                     "(tab-separated, no comment lines)")],
    _load_edge_list, expected=_counts(317080, 1049866), papers=("day2016", "farias2021",
                                                               "epasto2022"),
)

_FB100 = "Facebook100 (Traud, Mucha & Porter, Physica A 2012), September 2005"
_graph(
    "caltech36",
    f"{_FB100} Caltech friendship graph, Network Repository's MatrixMarket conversion: 769 "
    "nodes / 16,656 edges; LCC 762 / 16,651. Used by qardaji2012 (Table 1, whole graph).",
    [FileSpec("facebook100/socfb-Caltech36.mtx",
              "c3fee45718b2c91e54645a7cbb6ce5e79393d26a921e025b8a2faea3db2fb414",
              "https://nrvis.com/download/data/socfb/socfb-Caltech36.zip", 128852,
              download_url=f"{_RAW}/ShadowGhostH/soc_fb/"
                           "f1eb2dc580244768cacd895a2a90a0c5612749ea/socfb-Caltech36.mtx",
              source="ShadowGhostH/soc_fb @ f1eb2dc58024 : socfb-Caltech36.mtx")],
    _load_matrix_market, expected=_counts(769, 16656, 762, 16651), papers=("qardaji2012",),
    licence=_FB100_LICENCE,
)

_graph(
    "georgetown15",
    f"{_FB100} Georgetown friendship graph, Network Repository's MatrixMarket conversion: "
    "9,414 nodes / 425,638 edges; LCC 9,388 / 425,619. Used by qardaji2012 (Table 1).",
    [FileSpec("facebook100/socfb-Georgetown15.mtx.gz",
              "402f9b2f2a035065188d6180a6a907d19032d8d1d2924c87550fd67445a6870d",
              "https://nrvis.com/download/data/socfb/socfb-Georgetown15.zip", 1230442,
              download_url=f"{_RAW}/ShadowGhostH/soc_fb/"
                           "f1eb2dc580244768cacd895a2a90a0c5612749ea/socfb-Georgetown15.mtx",
              transform="gzip",
              content_sha256="52e45a75a9501eda4219c20ceefc2daa9ffa1d7f3c962472068e834154676325",
              source="ShadowGhostH/soc_fb @ f1eb2dc58024 : socfb-Georgetown15.mtx")],
    _load_matrix_market, expected=_counts(9414, 425638, 9388, 425619), papers=("qardaji2012",),
    licence=_FB100_LICENCE,
)

_graph(
    "unc28",
    f"{_FB100} University of North Carolina friendship graph, the original MATLAB file "
    "(sparse A): 18,163 nodes / 766,800 edges; LCC 18,158 / 766,796. Used by qardaji2012 "
    "(Table 1). The node attributes (local_info) are not loaded.",
    [FileSpec("facebook100/UNC28.mat",
              "c5641538317dce704811a66581725e2c0275ac2b4e7235d280fbf36852128d13",
              "https://archive.org/details/oxford-2005-facebook-matrix", 3318429,
              download_url=f"{_RAW}/rodrigotuna/Graph-Datasets/"
                           "d593db0eca5ac6703120e1d14d9d9dcf2ccf0105/unc28/UNC28.mat",
              source="rodrigotuna/Graph-Datasets @ d593db0eca5a : unc28/UNC28.mat")],
    functools.partial(_load_mat, variable="A"), expected=_counts(18163, 766800, 18158, 766796),
    papers=("qardaji2012",), licence=_FB100_LICENCE,
)

_graph(
    "as_caida",
    "SNAP as-caida20040105: CAIDA AS-relationship graph of 2004-01-05 (Leskovec, Kleinberg "
    "& Faloutsos, KDD 2005), three columns (from, to, relationship code; the code is "
    "ignored), every link in both directions: 16,301 nodes / 32,955 edges, connected. Used "
    "by sala2011 as its 'AS graph' (crawled 2004-01-01), whose Table 1 reports 16,573 / "
    "40,927: a different snapshot or preprocessing; this is the closest public file.",
    [FileSpec("as-caida20040105/as-caida20040105.txt",
              "5506bc46a9a053ed83bf3ef4012753eddb6d29219f4a478624278fd2b9e90018",
              "https://snap.stanford.edu/data/as-caida.tar.gz", 868815,
              download_url=f"{_RAW}/urihamster/Thesis/"
                           "8cf5809ed230dbdba1b7486209d660c2ed64627e/as-caida20040105.txt",
              source="urihamster/Thesis @ 8cf5809ed230 : as-caida20040105.txt (SNAP's "
                     "comment header missing)")],
    functools.partial(_load_edge_list, n_columns=3), expected=_counts(16301, 32955),
    papers=("sala2011",),
    licence="CAIDA AS Relationships data via SNAP: research use under CAIDA's acceptable "
            "use policy; cite CAIDA and SNAP.",
)

_graph(
    "musae_git",
    "MUSAE GitHub developer network (Rozemberczki, Allen & Sarkar, J. Complex Networks "
    "2021; SNAP git_web_ml): mutual followers among developers with >= 10 stars, 37,700 "
    "nodes / 289,003 edges, connected. Used by farias2021 ('Github', top-k influential "
    "nodes).",
    [FileSpec("musae_git/musae_git_edges.csv.gz",
              "a2f1e4c02eec4ebca4abce163d309d29e9aa040944008a23a753a22409be98e0",
              "https://snap.stanford.edu/data/git_web_ml.zip", 1088204,
              download_url=f"{_RAW}/benedekrozemberczki/datasets/"
                           "3be0c070b1c39fe100ab7b998c5391480f9683c8/git_web_ml/git_edges.csv",
              transform="gzip",
              content_sha256="34c57382246949d1b3b7fa641a8532672001ecae8e9558f0b3c113cc035bd781",
              source="benedekrozemberczki/datasets @ 3be0c070b1c3 : git_web_ml/git_edges.csv")],
    functools.partial(_load_edge_list, sep=","), expected=_counts(37700, 289003),
    papers=("farias2021",),
    licence="MUSAE datasets (Rozemberczki et al.), distributed by SNAP and the authors for "
            "research; cite the paper.",
)

_graph(
    "web_notredame",
    "SNAP web-NotreDame: hyperlinks between pages of nd.edu (Albert, Jeong & Barabasi, "
    "Nature 1999), SuiteSparse's MATLAB file (Problem.A), 1,497,134 directed links incl. "
    "27,455 self-links, symmetrised: 325,729 nodes / 1,090,108 edges, connected. Used by "
    "sala2011 as its 'WWW graph' (Table 1: 325,729 / 1,090,108).",
    [FileSpec("web-NotreDame/web-NotreDame.mat",
              "3f69b6918fd8c42ab760d6595304c85ff343c66c2de9d6e4672c959cf41fe432",
              "https://snap.stanford.edu/data/web-NotreDame.txt.gz", 1704810,
              download_url="https://sparse.tamu.edu/mat/SNAP/web-NotreDame.mat",
              source="SuiteSparse Matrix Collection SNAP/web-NotreDame (id 2302); copy: "
                     "finch-tensor/finch-tensor-lite @ 6b0577ea5463 : "
                     "tests/data/web-NotreDame.mat (byte identity with sparse.tamu.edu is "
                     "assumed, and checked by sha256 after a download)")],
    functools.partial(_load_mat, variable="Problem", field="A"),
    expected=_counts(325729, 1090108), papers=("sala2011",),
    licence="SNAP dataset via the SuiteSparse Matrix Collection (CC BY 4.0); cite SNAP, "
            "the paper and Davis & Hu (2011).",
)

# ------------------------------------------------------------ PGB's graphs (pgb2024 Table 3)
# PGB's other three graphs are facebook, wiki_vote and ca_hepph above: PGB's copies have the
# same data lines. PGB's loader (utils.get_mat) keeps every id of the file, self-loop-only
# ones included (loop_nodes=true: ca_hepph then has 12,008 nodes), and the whole graph.
_PGB_COMMIT = "076a910606856d69142aa93b2691da6795029887"
_PGB_RAW = f"{_RAW}/dooohow/PGB/{_PGB_COMMIT}/data"
_PGB_SOURCE = f"dooohow/PGB @ {_PGB_COMMIT[:12]} : data"
_NETWORK_REPOSITORY_LICENCE = (
    "Network Repository (Rossi & Ahmed, AAAI 2015): free for research, cite the repository; "
    "redistributed in PGB's repository."
)
_PGB_LICENCE = ("Generated by PGB's authors and published in its repository (no explicit "
                "licence); cite PGB (Liu et al. 2024).")

_graph(
    "road_minnesota",
    "Network Repository road-minnesota: the Minnesota road network (Rossi & Ahmed, AAAI "
    "2015), PGB's copy: space-separated, each edge once, 1-based ids: 2,642 nodes / 3,303 "
    "edges, two components; LCC 2,640 / 3,302. Used by pgb2024 ('Minnesota', whole graph).",
    [FileSpec("pgb/road-minnesota.txt",
              "40060bedd3c6d99078f7121ed8f12cf38f3a83fd9b281454fe3ef8d8ed9e9e56",
              "https://networkrepository.com/road-minnesota.php", 30303,
              download_url=f"{_PGB_RAW}/road-minnesota.txt",
              source=f"{_PGB_SOURCE}/road-minnesota.txt")],
    _load_edge_list, expected=_counts(2642, 3303, 2640, 3302), papers=("pgb2024",),
    licence=_NETWORK_REPOSITORY_LICENCE,
)

_graph(
    "p2p_gnutella25",
    "SNAP p2p-Gnutella25: Gnutella peer-to-peer links of 2002-08-25 (Ripeanu, Foster & "
    "Iamnitchi 2002; Leskovec, Kleinberg & Faloutsos, TKDD 2007), PGB's copy: "
    "tab-separated, SNAP's header removed, 54,705 directed links with no reciprocal pair, "
    "symmetrised: 22,687 nodes / 54,705 edges; LCC 22,663 / 54,693. Used by pgb2024 "
    "('Gnutella', whole graph).",
    [FileSpec("pgb/p2p-Gnutella25.txt",
              "e6487698352406d994db3346a87ca7571ac6a65ed3db9b49bfa7f54e1079daa7",
              "https://snap.stanford.edu/data/p2p-Gnutella25.txt.gz", 592105,
              download_url=f"{_PGB_RAW}/p2p-Gnutella25.txt",
              source=f"{_PGB_SOURCE}/p2p-Gnutella25.txt (SNAP's 4 '#' lines removed)")],
    _load_edge_list, expected=_counts(22687, 54705, 22663, 54693), papers=("pgb2024",),
)

_graph(
    "econ_poli_large",
    "Network Repository econ-poli-large (Rossi & Ahmed, AAAI 2015) with its weights removed, "
    "PGB's copy: space-separated, 1-based, 33,074 lines of which 15,575 are self-loops "
    "(i i, one per node; dropped): 15,575 nodes / 17,468 edges, connected. Used by pgb2024 "
    "('Econ').",
    [FileSpec("pgb/econ-poli-large-no-weights.txt",
              "e0371a5c0ac4c1c47973040604378598823a708d6ed559594dce0e9f59b2c5da",
              "https://networkrepository.com/econ-poli-large.php", 346423,
              download_url=f"{_PGB_RAW}/econ-poli-large-no-weights.txt",
              source=f"{_PGB_SOURCE}/econ-poli-large-no-weights.txt")],
    _load_edge_list, expected=_counts(15575, 17468), papers=("pgb2024",),
    licence=_NETWORK_REPOSITORY_LICENCE,
)

_graph(
    "pgb_er",
    "PGB's Erdos-Renyi random graph (pgb2024 'ER'), space-separated, each edge once, "
    "0-based: 10,000 nodes / 250,278 edges, connected.",
    [FileSpec("pgb/er_graph.txt.gz",
              "179b2a0d07addbe82721b75599078a4a1b90027909dc36b5d335f5b0d19d7cc9",
              "https://github.com/dooohow/PGB", 787555,
              download_url=f"{_PGB_RAW}/er_graph.txt", transform="gzip",
              content_sha256="dc2f3a2e575fffc25ee62496eb355b339ac3d6479e65690bf61aeb5bdc2c827e",
              source=f"{_PGB_SOURCE}/er_graph.txt")],
    _load_edge_list, expected=_counts(10000, 250278), papers=("pgb2024",),
    licence=_PGB_LICENCE,
)

_graph(
    "pgb_ba",
    "PGB's Barabasi-Albert random graph (pgb2024 'BA'), space-separated, each edge once, "
    "0-based: 10,000 nodes / 49,975 edges, connected.",
    [FileSpec("pgb/ba_graph.txt",
              "d3af788a9a03f038c891c35f485cb43ee16ebc89a79733a400ab5c7bac322030",
              "https://github.com/dooohow/PGB", 456528,
              download_url=f"{_PGB_RAW}/ba_graph.txt",
              source=f"{_PGB_SOURCE}/ba_graph.txt")],
    _load_edge_list, expected=_counts(10000, 49975), papers=("pgb2024",),
    licence=_PGB_LICENCE,
)
