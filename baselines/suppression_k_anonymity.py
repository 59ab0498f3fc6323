"""Non-smooth k-anonymity by suppression from the smooth algorithm's clusters (epasto2022).

epasto2022 Appendix D ("Baselines"): "Our algorithm has theoretical guarantees for smooth
k-anonymization, but it can be easily used as an heuristic for (standard) k-anonymity by
suppression (in the last step, the clusters are simply anonymized by computing the
intersection of all binary vectors)". The clusters are exactly those of
:func:`privpub.algorithms.clustering.smooth_clusters` (same parameters; the runner gives this
baseline
the smooth mechanism's seeds, ``seeds_of``, so both cluster the rows identically: a paired
comparison); every row of a cluster is released as the items *all* its rows hold, a subset
of the input shared by >= k rows: k-anonymity by suppression (Def. 3.4). Why the pairing
and what ``split_large`` changes here: docs/design.md, "epasto2022: smooth k-anonymity".

References
----------
.. [EEMM22] A. Epasto, H. Esfandiari, V. Mirrokni, A. Munoz Medina. Smooth Anonymity for
   Sparse Graphs. 2022, arXiv:2207.06358. Def. 3.4, Appendix D.
"""

from __future__ import annotations

import numpy as np

from privpub.algorithms.clustering import clustered_release
from privpub.registry import K_ANONYMITY, register_mechanism
from privpub.types import Kind, Release

__all__ = ["nonsmooth_k_anonymity"]


@register_mechanism(
    "nonsmooth_k_anonymity",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=K_ANONYMITY,
    paper="epasto2022",
    role="baseline",
    seeds_of="smooth_k_anonymity",
    source='Appendix D ("Baselines": non-smooth k-anonymity)',
)
def nonsmooth_k_anonymity(
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
    """k-anonymity by suppression: the smooth algorithm's clusters, each released as the
    intersection of its rows [EEMM22, Appendix D, "non-smooth"].

    Parameters are those of :func:`privpub.algorithms.clustering.smooth_clusters` (and of the smooth
    mechanism, ``smooth_k_anonymity``).

    Returns
    -------
    Release
        ``value``: a :class:`~privpub.types.KAnonymousMatrix` with ``clusters`` and
        ``suppression=True`` (the verifier checks it is a subset of the input); ``info`` as
        for the smooth mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0], [0, 0, 1]])
    >>> nonsmooth_k_anonymity(x, k=2, rng=np.random.default_rng(0)).value.toarray().tolist()
    [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]
    """
    return clustered_release(matrix, k=k, alpha=alpha, n_orders=n_orders,
                             chunk_size=chunk_size, n_hashes=n_hashes, n_jobs=n_jobs,
                             split_large=split_large, rng=rng, rule="intersection")
