"""Binary-matrix views (users x items, int8 0/1 CSR) used by epasto2022.

Epasto, Esfandiari, Mirrokni & Munoz Medina, *Smooth Anonymity for Sparse Graphs* (2022),
Sec. 6 and Appendix D, release sparse binary matrices: ``adult`` ("We use all categorical
features represented as a binary vector"), ``playstore`` (device features of Google Play
users, proprietary), ``dblp`` (the co-authorship adjacency matrix), ``stanford`` (SNAP
web-Stanford's directed link matrix; not available here, ``notredame_binary`` is the
closest public web graph) and a bipartite stochastic block model (``sbm_epasto`` in
:mod:`privpub.data.synthetic`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from privpub.data.graphs import _load_edge_list
from privpub.data.readers import read_mat_variable
from privpub.data.registry import DatasetSpec, get_dataset_spec, register_dataset
from privpub.data.tables import (
    ADULT_CATEGORICAL,
    PLAYSTORE_CATEGORICAL,
    _load_adult,
    _load_playstore,
)
from privpub.errors import PrivpubError
from privpub.types import Kind, Table, as_binary_matrix

__all__ = ["one_hot"]


def one_hot(table: Table, *, attributes=None) -> tuple[sp.csr_array, list[str]]:
    """One-hot encode categorical/ordinal attributes of ``table`` as a binary matrix.

    Each row of the table becomes a row of the matrix; each (attribute, value) pair of the
    attributes' *domains* becomes a column named ``"<attribute>=<value>"``, so that two
    tables with the same schema (e.g. adult's train and test splits) get the same columns.
    A missing value gives no 1 for that attribute.

    Parameters
    ----------
    table : Table
    attributes : sequence of str, optional
        Attributes to encode, default every categorical attribute of the schema.

    Returns
    -------
    matrix : scipy.sparse.csr_array
        ``n_rows x sum(domain sizes)``, int8 0/1.
    columns : list of str
        Column names.
    """
    schema = table.schema
    if attributes is None:
        attributes = [a.name for a in schema.attributes if a.kind == "categorical"]
    rows, cols, names, offset = [], [], [], 0
    for name in attributes:
        try:
            attr = schema[name]
        except KeyError:
            raise PrivpubError(f"one_hot: the table has no attribute {name!r}") from None
        if attr.kind == "numeric":
            raise PrivpubError(f"one_hot: attribute {name!r} is numeric, not categorical")
        col = table.data[name]
        codes = (col.cat.codes.to_numpy() if hasattr(col, "cat")
                 else np.asarray(col.map({v: i for i, v in enumerate(attr.domain)})
                                 .fillna(-1), dtype=np.int64))
        present = np.flatnonzero(codes >= 0)
        rows.append(present)
        cols.append(codes[present].astype(np.int64) + offset)
        names.extend(f"{name}={v}" for v in attr.domain)
        offset += len(attr.domain)
    r = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    c = np.concatenate(cols) if cols else np.empty(0, dtype=np.int64)
    m = sp.csr_array((np.ones(r.size, dtype=np.int8), (r, c)), shape=(table.n_rows, offset))
    return as_binary_matrix(m), names


def _adult_binary(paths, *, split: str = "train"):
    matrix, _ = one_hot(_load_adult(paths, split=split), attributes=ADULT_CATEGORICAL)
    return matrix


def _playstore_binary(paths):
    matrix, _ = one_hot(_load_playstore(paths), attributes=PLAYSTORE_CATEGORICAL)
    return matrix


def _dblp_binary(paths):
    return as_binary_matrix(_load_edge_list(paths).adjacency)


def _notredame_binary(paths):
    """Directed link matrix of web-NotreDame: entry (i, j) = 1 iff page i links to page j."""
    a = read_mat_variable(paths[0], variable="Problem", field="A")
    if not sp.issparse(a) or a.shape[0] != a.shape[1]:
        raise PrivpubError(f"{paths[0]}: Problem.A is not a square sparse matrix")
    a = sp.csr_array(a)
    a.setdiag(0)  # self-links say nothing about linking to another page
    a.data[:] = a.data != 0
    return as_binary_matrix(a)


register_dataset(DatasetSpec(
    name="adult_binary",
    kind=Kind.BINARY_MATRIX,
    description=(
        "epasto2022's 'adult': UCI Adult people x one-hot categorical features, 'all "
        "categorical features represented as a binary vector' (Appendix D). Rows are the "
        "rows of load_dataset('adult', split=...) in the same order (30,162 for train), so "
        "the income labels of that table go with them (epasto2022 anonymises the features, "
        "not the labels). Columns: one per value of workclass (8), education (16), "
        "marital-status (7), occupation (14), relationship (6), race (5), sex (2) and "
        "native-country (41) = 99, named as privpub.data.one_hot(table, "
        "attributes=ADULT_CATEGORICAL) returns them; every row has exactly 8 ones. "
        "Education counts as categorical here (UCI lists it as a discrete attribute; its "
        "order is kept in the adult table's schema). The label income and the numeric "
        "attributes are left out."
    ),
    files=get_dataset_spec("adult").files,
    licence=get_dataset_spec("adult").licence,
    expected={"shape": (30162, 99), "nnz": 30162 * 8},
    defaults={"split": "train"},
    papers=("epasto2022",),
    loader=_adult_binary,
))

register_dataset(DatasetSpec(
    name="playstore_binary",
    kind=Kind.BINARY_MATRIX,
    description=(
        "Closest public stand-in for epasto2022's 'playstore', which is a proprietary "
        "users x device-features matrix that is not available: the Kaggle Google Play apps "
        "table (googleplaystore, 10,841 app rows) as apps x one-hot values of its "
        "categorical columns Category (33), Type (2), Content Rating (6), Genres (119) and "
        "Android Ver (33) = 193 columns; a missing value gives no 1. Its size and density "
        "differ from the paper's matrix, so results are comparable in kind, not in number."
    ),
    files=get_dataset_spec("googleplaystore").files,
    licence=get_dataset_spec("googleplaystore").licence,
    expected={"shape": (10841, 193), "nnz": 10841 * 5 - 1 - 2},
    papers=("epasto2022",),
    loader=_playstore_binary,
))

register_dataset(DatasetSpec(
    name="dblp_binary",
    kind=Kind.BINARY_MATRIX,
    description=(
        "epasto2022's 'dblp': the symmetric adjacency matrix of the com-DBLP co-authorship "
        "graph (Yang & Leskovec, ICDM 2012) as a users x users binary matrix, entry (i, j) "
        "= 1 iff authors i and j co-authored a paper; 317,080 x 317,080 with 2,099,732 "
        "ones (each of the 1,049,866 edges twice, empty diagonal). Node order as in "
        "load_dataset('dblp')."
    ),
    files=get_dataset_spec("dblp").files,
    licence=get_dataset_spec("dblp").licence,
    expected={"shape": (317080, 317080), "nnz": 2 * 1049866},
    papers=("epasto2022",),
    loader=_dblp_binary,
))

register_dataset(DatasetSpec(
    name="notredame_binary",
    kind=Kind.BINARY_MATRIX,
    description=(
        "Stand-in for epasto2022's 'stanford' (SNAP web-Stanford, a directed web graph whose "
        "entry (i, j) is 1 iff page i links to page j; web-Stanford is not available here). "
        "The closest public web graph we have is SNAP web-NotreDame: its directed link "
        "matrix, pages x pages, 325,729 x 325,729 with 1,469,679 ones (SuiteSparse's "
        "Problem.A without its 27,455 self-links). web-Stanford is of the same kind and "
        "scale: 281,903 pages, 2,312,497 links."
    ),
    files=get_dataset_spec("web_notredame").files,
    licence=get_dataset_spec("web_notredame").licence,
    expected={"shape": (325729, 325729), "nnz": 1497134 - 27455},
    papers=("epasto2022",),
    loader=_notredame_binary,
))


# ------------------------------------------------------------------ epasto2022 Fig. 4 and 3b
def _adult_binary_ml(paths):
    """Train-split one-hot features with income labels, carrying the test split."""
    from privpub.types import LabelledMatrix

    train = _load_adult(paths, split="train")
    test = _load_adult(paths, split="test")
    x_train, _ = one_hot(train, attributes=ADULT_CATEGORICAL)
    x_test, _ = one_hot(test, attributes=ADULT_CATEGORICAL)
    y_train = (train.data["income"].astype(str) == ">50K").to_numpy(dtype=np.int8)
    y_test = (test.data["income"].astype(str) == ">50K").to_numpy(dtype=np.int8)
    return LabelledMatrix.wrap(x_train, labels=y_train, test_matrix=x_test, test_labels=y_test)


register_dataset(DatasetSpec(
    name="adult_binary_ml",
    kind=Kind.BINARY_MATRIX,
    description=(
        "epasto2022 Fig. 4 / Fig. 7: adult_binary (train split, 30,162 x 99 one-hot "
        "categorical features) with each row's income label (1 = '>50K'), carrying the test "
        "split one-hot on the same 99 columns (15,060 rows) and its labels. Mechanisms see "
        "the train matrix only; the classifier metric (accuracy_mlp_binary) trains on the "
        "release with the original, non-anonymised labels and tests on the original test "
        "split, as the paper does."
    ),
    files=get_dataset_spec("adult").files,
    licence=get_dataset_spec("adult").licence,
    expected={"shape": (30162, 99), "nnz": 30162 * 8},
    papers=("epasto2022",),
    loader=_adult_binary_ml,
))


def _user_lists_standin(paths):
    """ego-Twitter's symmetric adjacency as a users x users matrix."""
    graph = get_dataset_spec("twitter").loader(paths)
    return as_binary_matrix(graph.adjacency)


register_dataset(DatasetSpec(
    name="user_lists_standin",
    kind=Kind.BINARY_MATRIX,
    description=(
        "Stand-in for epasto2022's 'user_lists' (a proprietary users x marketing-interest-"
        "lists matrix with over a billion rows, anonymised with the LSH chunking heuristic of "
        "Appendix D). The largest matrix available here by number of entries: SNAP ego-"
        "Twitter's symmetric adjacency as users x users ('who is on whose list'), 81,306 x "
        "81,306 with 2,684,592 ones (each of the 1,342,296 undirected edges twice, no "
        "self-loops). Experiments run the LSH heuristic on it with chunks small enough to "
        "give several chunks (see epasto2022_table1's notes)."
    ),
    files=get_dataset_spec("twitter").files,
    licence=get_dataset_spec("twitter").licence,
    expected={"shape": (81306, 81306), "nnz": 2 * 1342296},
    papers=("epasto2022",),
    loader=_user_lists_standin,
))


def _sbm_labelled(*, n_rows: int = 256, n_test: int = 256, n_cols: int = 64,
                  block_size: int = 16, p_in: float = 0.6, p_out: float = 0.05, rng):
    """A bipartite SBM whose row label is the parity of its block, with a test set drawn
    from the same model (a synthetic stand-in for adult_binary_ml in smoke runs)."""
    from privpub.data.synthetic import bipartite_sbm
    from privpub.types import LabelledMatrix

    total = n_rows + n_test
    copies = -(-total // n_cols)  # square SBMs stacked: every row block has its columns
    both = sp.vstack([bipartite_sbm(n_rows=n_cols, n_cols=n_cols, block_size=block_size,
                                    p_in=p_in, p_out=p_out, rng=rng) for _ in range(copies)],
                     format="csr")[:total]
    labels = ((np.arange(total) % n_cols) // block_size % 2).astype(np.int8)
    perm = rng.permutation(n_rows + n_test)  # train and test from every block
    train, test = np.sort(perm[:n_rows]), np.sort(perm[n_rows:])
    return LabelledMatrix.wrap(as_binary_matrix(both[train]), labels=labels[train],
                               test_matrix=as_binary_matrix(both[test]),
                               test_labels=labels[test])


register_dataset(DatasetSpec(
    name="sbm_labelled_small",
    kind=Kind.BINARY_MATRIX,
    description=(
        "Synthetic labelled binary matrix for smoke runs of epasto2022 Fig. 4 / 7: a "
        "bipartite SBM (8 stacked 64 x 64 SBMs, blocks of 16, p_in 0.6, p_out 0.05: 512 "
        "rows) split at random into 256 train and 256 test rows; a row's label is the "
        "parity of its block."
    ),
    synthetic=True,
    licence="Generated.",
    expected={"shape": (256, 64)},
    defaults={"n_rows": 256, "n_test": 256, "n_cols": 64, "block_size": 16, "p_in": 0.6,
              "p_out": 0.05},
    papers=("epasto2022",),
    loader=_sbm_labelled,
))
