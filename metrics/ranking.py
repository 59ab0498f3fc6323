"""Top-k accuracy of a released ranking (farias2021 Sec. 6.1).

References
----------
.. [farias2021] V. Farias, F. Brito, C. Flynn, J. Machado, S. Majumdar, D. Srivastava.
   Local Dampening: Differential Privacy for Non-numeric Queries via Local Sensitivity.
   PVLDB 14(4), 2021. Sec. 6.1, "Evaluation".
"""

from __future__ import annotations

import numpy as np

from privpub.errors import PrivpubError
from privpub.metrics._checks import same_type
from privpub.registry import register_metric
from privpub.types import Kind, Ranking
from privpub.validation import check_positive_int

__all__ = ["topk_overlap"]


def _items(r: Ranking, role: str) -> np.ndarray:
    items = np.asarray(r.items).ravel()
    if items.size == 0:
        raise PrivpubError(f"{role} ranking is empty")
    if items.dtype.kind == "f" and np.isnan(items).any():
        raise PrivpubError(f"{role} ranking contains NaN item ids")
    return items


@register_metric("topk_overlap", kinds=Kind.RANKING, higher_is_better=True, label="top-k accuracy")
def topk_overlap(truth: Ranking, release: Ranking, *, k: int | None = None) -> float:
    """Fraction of the true top-k retrieved: ``|retrieved_topk ∩ true_topk| / k``.

    farias2021 Sec. 6.1 evaluates private top-k selection of influential nodes "by the
    percentage of common nodes to the retrieved top-k set and the true top-k set, i.e.,
    (|retrieved_topk ∩ true_topk|)/k". The order inside either top-k does not matter.

    Parameters
    ----------
    truth : Ranking
        The true ranking, best first; its first ``k`` items are the true top-k. (Only ids
        are known, so ties at rank ``k`` are broken by the order given.)
    release : Ranking
        The released selection, best first; its first ``k`` items are used. A release with
        fewer than ``k`` items scores its missing items as misses. Repeated ids are an error
        (a top-k selection draws without replacement).
    k : int, optional
        Default: the number of released items.

    Returns
    -------
    float
        A value in [0, 1].

    Raises
    ------
    PrivpubError
        On an empty ranking, NaN ids, repeated released ids, or a truth shorter than ``k``.
    """
    same_type(truth, release, (Ranking,), "topk_overlap")
    true_items = _items(truth, "truth")
    released = _items(release, "release")
    k = released.size if k is None else check_positive_int(k, "k")
    if true_items.size < k:
        raise PrivpubError(f"truth ranking has {true_items.size} items, fewer than k = {k}")
    released = released[:k]
    if np.unique(released).size != released.size:
        raise PrivpubError("release ranking repeats item ids; a top-k selection must not")
    hits = np.intersect1d(true_items[:k], released, assume_unique=False).size
    return hits / k
