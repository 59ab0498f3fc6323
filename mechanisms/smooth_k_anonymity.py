"""Smooth k-anonymity for sparse binary matrices: epasto2022 Sec 5.3 with Appendix D's changes.

A users x items 0/1 matrix is released so that every row is equal to at least ``k - 1``
other rows, and every item given to a group of equal rows is held, in the input, by a strict
majority of that group (epasto2022 Def. 3.5): the rows are clustered into clusters of at
least ``k`` (:mod:`privpub.algorithms.clustering`, shared with the non-smooth baseline) and each
cluster gets the items a strict majority of its rows hold (:mod:`privpub.algorithms.binary`).

No public implementation exists; this one is the reference for privpub. Which reading of
the paper each step implements (the extracted text lost most of the inline math; the
recovered values are in ``docs/papers.md``) and the measured effect of the
optional ``split_large``: docs/design.md, "epasto2022: smooth k-anonymity".

References
----------
.. [EEMM22] A. Epasto, H. Esfandiari, V. Mirrokni, A. Munoz Medina. Smooth Anonymity for
   Sparse Graphs. 2022, arXiv:2207.06358. Def. 3.5, Sec 5.1-5.3, Sec 6, Appendix D.
"""

from __future__ import annotations

import numpy as np

from privpub.algorithms.clustering import clustered_release
from privpub.registry import SMOOTH_K_ANONYMITY, register_mechanism
from privpub.types import Kind, Release

__all__ = ["smooth_k_anonymity"]


@register_mechanism(
    "smooth_k_anonymity",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=SMOOTH_K_ANONYMITY,
    paper="epasto2022",
    role="mechanism",
)
def smooth_k_anonymity(
    matrix,
    *,
    k: int,
    alpha: float = 0.5,
    n_orders: int = 10,
    chunk_size: int | None = None,
    n_hashes: int = 8,
    n_jobs: int = 1,
    split_large: bool = False,
    rng: np.random.Generator,
) -> Release:
    """Smooth k-anonymity by clustering and per-cluster majority [EEMM22, Sec 5.3, App. D].

    Rows are clustered (:func:`privpub.algorithms.clustering.smooth_clusters`) into clusters of at
    least ``k``; each row is released as the set of items a strict majority of its cluster
    holds (a tie is not a majority).

    Parameters
    ----------
    matrix : users x items 0/1 matrix (scipy sparse or array); not modified.
    k : int >= 2
    alpha, n_orders, chunk_size, n_hashes, n_jobs, split_large
        See :func:`privpub.algorithms.clustering.smooth_clusters` (defaults: the paper's 1/2 and 10
        orders, no chunking, 8 hashes, 1 job, no splitting).
    rng : numpy.random.Generator

    Returns
    -------
    Release
        ``value``: a :class:`~privpub.types.KAnonymousMatrix` (int8 CSR, same shape, with
        ``clusters`` = cluster id per row, checked by :mod:`privpub.verify`); ``info``:
        ``n_clusters``, ``facility_cost``, ``facilities_opened``, ``facilities_closed``,
        ``n_chunks``.

    Raises
    ------
    NotApplicableError
        ``k`` > number of rows.
    PrivpubError
        Bad parameters or input.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0], [0, 0, 1]])
    >>> out = smooth_k_anonymity(x, k=2, rng=np.random.default_rng(0)).value
    >>> out.clusters.tolist()      # one cluster of 4 rows here
    [0, 0, 0, 0]
    >>> out.toarray().tolist()     # item 0: 3 of 4 (majority); item 1: 2 of 4 (a tie: no)
    [[1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]]
    """
    return clustered_release(matrix, k=k, alpha=alpha, n_orders=n_orders,
                             chunk_size=chunk_size, n_hashes=n_hashes, n_jobs=n_jobs,
                             split_large=split_large, rng=rng, rule="majority")
