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
