"""Non-smooth k-anonymity by suppression from the smooth algorithm's clusters (epasto2022).

epasto2022 Appendix D ("Baselines"): "Our algorithm has theoretical guarantees for smooth
k-anonymization, but it can be easily used as an heuristic for (standard) k-anonymity by
suppression (in the last step, the clusters are simply anonymized by computing the
intersection of all binary vectors), so we report results for non-smooth k-anonymity using
our algorithm as an additional baseline."

The clusters are exactly those of :func:`mechanisms.smooth_k_anonymity.smooth_clusters`
(same parameters, same random stream, so with the same seed both mechanisms cluster the
rows identically; the runner gives this baseline the smooth mechanism's seeds
(``seeds_of``), so in an experiment every non-smooth release intersects the very clusters
whose majorities the smooth release of the same repetition publishes: a paired comparison,
and the clustering's search over random orders is done once for both; ``split_large``
cuts clusters of ``>= 2k`` rows into pieces of ``k`` to ``2k - 1``, which matters far
more here than for the smooth release); every row of a cluster is released as the set of
items *all* rows of the cluster hold. The release is a subset of
the input and every row's item set is shared by its whole cluster (>= k rows): k-anonymity
by suppression (Def. 3.4).

References
----------
.. [EEMM22] A. Epasto, H. Esfandiari, V. Mirrokni, A. Munoz Medina. Smooth Anonymity for
   Sparse Graphs. 2022, arXiv:2207.06358. Def. 3.4, Appendix D.
"""

from __future__ import annotations

import numpy as np

from mechanisms.smooth_k_anonymity import _release
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

    Parameters are those of :func:`mechanisms.smooth_k_anonymity.smooth_k_anonymity`.

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
    return _release(matrix, k=k, alpha=alpha, n_orders=n_orders, chunk_size=chunk_size,
                    n_hashes=n_hashes, n_jobs=n_jobs, split_large=split_large, rng=rng,
                    rule="intersection")
