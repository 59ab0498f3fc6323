"""Set metrics on the 1-entries of binary matrices (edges of bipartite graphs) and graph edges.

epasto2022 measures the utility of an anonymised user x item matrix by the Jaccard
similarity of its set of 1-entries with the original one (Def. 3.6), and reports the
*suppressed* and *created* entries as distortion measures (Sec. 6, Table 1).

All metrics work on :class:`scipy.sparse.csr_array` (or any scipy sparse / dense 0/1
matrix) of equal shape without densifying: the intersection is the number of non-zeros of
the element-wise product. For two :class:`~privpub.types.Graph` objects the sets are the
undirected edges ``{u, v}``, taken once each from the upper triangle of the adjacency.

========================  =========================================  ===================== =====
name                      value                                      kinds                 best
========================  =========================================  ===================== =====
``jaccard``               ``|T ∩ R| / |T ∪ R|`` (1 if both empty)    binary_matrix, graph  high
``suppressed_fraction``   ``|T \\ R| / |T|``                          binary_matrix, graph  low
``created_fraction``      ``|R \\ T| / |T|``                          binary_matrix, graph  low
========================  =========================================  ===================== =====

``T`` is the set of 1-entries of the truth, ``R`` that of the release.

References
----------
.. [epasto2022] A. Epasto, H. Esfandiari, V. Mirrokni, A. Munoz Medina. Smooth Anonymity
   for Sparse Graphs. 2022 (arXiv 2207.06358). Def. 3.6, Sec. 6 and Table 1.
"""

from __future__ import annotations

import scipy.sparse as sp

from privpub.errors import PrivpubError
from privpub.metrics._checks import type_name
from privpub.registry import register_metric
from privpub.types import Graph, Kind, as_binary_matrix

__all__ = ["jaccard", "suppressed_fraction", "created_fraction", "set_sizes"]

_KINDS = (Kind.BINARY_MATRIX, Kind.GRAPH)


def _entries(x, role: str) -> sp.csr_array:
    """Canonical 0/1 CSR matrix whose non-zeros are the set ``x`` stands for."""
    if isinstance(x, Graph):
        return as_binary_matrix(sp.triu(x.adjacency, k=1, format="csr"))
    try:
        return as_binary_matrix(x)
    except PrivpubError as exc:
        raise PrivpubError(f"{role}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise PrivpubError(
            f"{role} must be a 0/1 matrix (scipy sparse or array) or a Graph, "
            f"got {type_name(x)}: {exc}"
        ) from None


def set_sizes(truth, release) -> tuple[int, int, int]:
    """``(|T|, |R|, |T ∩ R|)`` for two binary matrices of equal shape or two graphs.

    Parameters
    ----------
    truth, release : scipy sparse matrix / array, numpy array, or Graph
        Both matrices (0/1 entries, equal shape) or both graphs on the same number of nodes.

    Raises
    ------
    PrivpubError
        On a graph compared with a matrix, shapes that differ, or entries other than 0/1
        (NaN included).
    """
    if isinstance(truth, Graph) != isinstance(release, Graph):
        raise PrivpubError(
            "compare a Graph with a Graph or a binary matrix with a binary matrix; got truth "
            f"{type_name(truth)} and release {type_name(release)}"
        )
    t = _entries(truth, "truth")
    r = _entries(release, "release")
    if t.shape != r.shape:
        what = "node counts" if isinstance(truth, Graph) else "shapes"
        raise PrivpubError(
            f"truth and release {what} differ: {t.shape} vs {r.shape} (entries are matched "
            "by position, so both must have the same rows and columns)"
        )
    inter = int(t.multiply(r).count_nonzero())
    return int(t.nnz), int(r.nnz), inter


@register_metric("jaccard", kinds=_KINDS, higher_is_better=True, label="Jaccard similarity")
def jaccard(truth, release) -> float:
    """Jaccard similarity of the 1-entries of two binary matrices (epasto2022 Def. 3.6).

    ``J(T, R) = |T ∩ R| / |T ∪ R|`` where ``T`` and ``R`` are the sets of edges of the
    original and released bipartite graphs, i.e. the positions of the 1-entries of the two
    user x item matrices. Graphs compare their undirected edge sets. Both empty: ``J = 1``
    (the release reproduces the input exactly).

    Parameters
    ----------
    truth, release : scipy.sparse.csr_array (or any 0/1 matrix), or Graph
        Of equal shape (equal node count for graphs). Sparse inputs are never densified.

    Returns
    -------
    float
        A value in [0, 1].
    """
    t, r, inter = set_sizes(truth, release)
    union = t + r - inter
    return 1.0 if union == 0 else inter / union


def _over_truth(t: int, what: str) -> None:
    if t == 0:
        raise PrivpubError(
            f"the {what} fraction is relative to the truth's number of 1-entries, and the "
            "truth has none"
        )


@register_metric(
    "suppressed_fraction", kinds=_KINDS, higher_is_better=False, label="suppressed entries"
)
def suppressed_fraction(truth, release) -> float:
    """Fraction of the original 1-entries missing from the release (epasto2022 Sec. 6).

    ``|T \\ R| / |T|``. epasto2022 Table 1 ("Supp.") reports it as a percentage of the
    original entries: for k-anonymity by suppression (``R ⊆ T``) its rows satisfy
    Jaccard + Supp. = 100%, which holds only with denominator ``|T|``.

    Parameters
    ----------
    truth, release : binary matrices of equal shape, or Graphs
        See :func:`jaccard`.

    Returns
    -------
    float
        A value in [0, 1].

    Raises
    ------
    PrivpubError
        If the truth has no 1-entry (the fraction is undefined).
    """
    t, _, inter = set_sizes(truth, release)
    _over_truth(t, "suppressed")
    return (t - inter) / t


@register_metric("created_fraction", kinds=_KINDS, higher_is_better=False, label="created entries")
def created_fraction(truth, release) -> float:
    """Released 1-entries not in the original, as a fraction of ``|T|`` (epasto2022 Sec. 6).

    ``|R \\ T| / |T|``. epasto2022 does not state the denominator of Table 1's "Created"
    column; ``|T|`` (the original entries, the same denominator as "Supp.") is the one
    consistent with its numbers: ``J = (1 - S) / (1 + C)`` reproduces every "smooth" row
    (e.g. adult: 0.911 / 1.072 = 85.0%; playstore: 0.738 / 1.116 = 66.1%), whereas the
    release-size denominator gives 67.3% for playstore instead of the reported 66.1%.
    The value may exceed 1 (e.g. randomized response on a sparse matrix).

    Parameters
    ----------
    truth, release : binary matrices of equal shape, or Graphs
        See :func:`jaccard`.

    Returns
    -------
    float
        A value >= 0.

    Raises
    ------
    PrivpubError
        If the truth has no 1-entry (the fraction is undefined).
    """
    t, r, inter = set_sizes(truth, release)
    _over_truth(t, "created")
    return (r - inter) / t
