"""Accuracy of released classifiers (kind ``classifier``), e.g. farias2021's private trees.

A classifier release has ``predict(table) -> class values``. farias2021 Sec 6.2 scores its
private decision-tree *learners* by "the mean accuracy across the 10 runs of a 10-fold cross
validation": each fold trains a new private tree on the other nine folds and tests it on
the held-out one. :func:`accuracy_cv_learner` does exactly that with the release's
``refit(train_table, rng=...) -> classifier`` (same parameters, fresh budget: each fold's
tree is a separate release of a separate training set); one repetition of a cell is one
10-fold run, so ``repetitions: 10`` gives the paper's protocol. :func:`accuracy_in_sample`
is the accuracy of the released classifier on the whole original table it was learnt from.

References
----------
.. [farias2021] V. Farias et al. Local Dampening. PVLDB 14(4), 2021. Sec 6.2, Fig. 6.
"""

from __future__ import annotations

import numpy as np

from privpub.errors import PrivpubError
from privpub.metrics._checks import type_name
from privpub.registry import register_metric
from privpub.types import Kind, Table
from privpub.validation import check_positive_int, check_rng

__all__ = ["accuracy_cv_learner", "accuracy_in_sample"]


def _labels(table: Table) -> np.ndarray:
    cls = table.schema.class_attribute
    if cls is None:
        raise PrivpubError("the truth table's schema names no class attribute")
    return np.asarray(table.data[cls].to_numpy(), dtype=object)


def _check(truth, release, need_refit: bool):
    if not isinstance(truth, Table):
        raise PrivpubError(f"truth must be a Table, got {type_name(truth)}")
    if not hasattr(release, "predict"):
        raise PrivpubError(f"release must be a classifier with predict(), got {type_name(release)}")
    if need_refit and not callable(getattr(release, "refit", None)):
        raise PrivpubError(
            f"cross-validating a {type_name(release)} needs refit(table, rng=...) to learn "
            "it again on each training fold"
        )


@register_metric(
    "accuracy_cv_learner",
    kinds=Kind.CLASSIFIER,
    higher_is_better=True,
    label="accuracy (10-fold CV of the private learner)",
)
def accuracy_cv_learner(truth: Table, release, *, n_folds: int = 10, rng=None) -> float:
    """k-fold cross-validation accuracy of the learner that produced ``release``.

    Folds are shuffled and stratified by class (plain shuffled folds when a class has fewer
    rows than folds); each training fold is learnt again with ``release.refit`` and the
    accuracy is pooled over the folds (correct predictions / rows). A release with
    ``encode_table(table)`` (DiffPID3's trees) has ``truth`` encoded once and the folds cut
    from that with ``take(rows)``, which its ``refit`` and ``predict`` accept in place of a
    table (the same records, so the same result, without encoding every fold again).

    Parameters
    ----------
    truth : Table
        The original table (with ``schema.class_attribute``).
    release : classifier
        Has ``predict(table)`` and ``refit(table, *, rng)`` (and optionally
        ``encode_table(table)``, see above).
    n_folds : int, default 10
        farias2021 Sec 6.2 uses 10.
    rng : numpy.random.Generator, int or None
        Seeds the folds and every refit.

    Returns
    -------
    float
        Accuracy in [0, 1].
    """
    _check(truth, release, need_refit=True)
    n_folds = check_positive_int(n_folds, "n_folds")
    if n_folds < 2:
        raise PrivpubError(f"n_folds must be >= 2, got {n_folds}")
    rng = check_rng(rng)
    y = _labels(truth)
    n = y.size
    if n < n_folds:
        raise PrivpubError(f"the table has {n} rows, fewer than n_folds = {n_folds}")
    from sklearn.model_selection import KFold, StratifiedKFold

    _, codes, counts = np.unique(y.astype(str), return_inverse=True, return_counts=True)
    seed = int(rng.integers(0, 2**31 - 1))
    if counts.min() >= n_folds:
        folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    else:
        folds = KFold(n_splits=n_folds, shuffle=True, random_state=seed)
    correct = 0
    data = truth.data
    encode = getattr(release, "encode_table", None)
    encoded = encode(truth) if callable(encode) else None
    for train_idx, test_idx in folds.split(np.zeros(n), codes):
        if encoded is not None:  # the folds cut from one encoding of the table
            train, test = encoded.take(train_idx), encoded.take(test_idx)
        else:
            train = Table(data.iloc[train_idx].reset_index(drop=True), truth.schema)
            test = Table(data.iloc[test_idx].reset_index(drop=True), truth.schema)
        model = release.refit(train, rng=rng)
        correct += int(np.sum(np.asarray(model.predict(test), dtype=object) == y[test_idx]))
    return correct / n


@register_metric(
    "accuracy_in_sample",
    kinds=Kind.CLASSIFIER,
    higher_is_better=True,
    label="accuracy on the training table",
)
def accuracy_in_sample(truth: Table, release) -> float:
    """Accuracy of the released classifier on the original table it was learnt from."""
    _check(truth, release, need_refit=False)
    y = _labels(truth)
    return float(np.mean(np.asarray(release.predict(truth), dtype=object) == y))
