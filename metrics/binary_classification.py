"""Downstream learning on an anonymised binary matrix (epasto2022 Fig. 4 and Fig. 7).

epasto2022 Sec. 6 and Appendix D ("Learning from anonymous data"): "For the adult dataset
we train a neural net classifier for the standard classification task for this dataset of
predicting whether the income [...] is [> 50K] per year. For all methods, we only anonymize
the features not the labels and we train the model on the anonymized features in output
from the algorithms and report the prediction on the original test dataset. We use a
1-layer, 10-hidden unit network with RELU activation nodes."

:func:`accuracy_mlp_binary` does exactly that: the truth is a
:class:`~privpub.types.LabelledMatrix` (e.g. dataset ``adult_binary_ml``: the one-hot
categorical features of Adult's train split, their income labels and the one-hot test
split); the release is the anonymised train matrix (same rows, same order). The model is
scikit-learn's ``MLPClassifier(hidden_layer_sizes=(10,), activation="relu")`` (defaults
otherwise: Adam, ``max_iter=200``, early stop on the training loss) on the 0/1 features
as they are (no scaling: every feature is already in [0, 1]), seeded from the metric's rng.
It runs as :func:`privpub.metrics.mlp.fit_mlp_binary`, the same algorithm and random stream
compiled with numba (~10x faster on Adult: scikit-learn's time went to Python overhead per
minibatch); it agrees with scikit-learn up to floating-point rounding
(``metrics/tests/test_mlp.py``). The score is the accuracy on the original test split.

References
----------
.. [epasto2022] A. Epasto et al. Smooth Anonymity for Sparse Graphs. 2022, Sec. 6, Fig. 4,
   Appendix D, Fig. 7.
"""

from __future__ import annotations

import numpy as np

from privpub.errors import PrivpubError
from privpub.metrics._checks import type_name
from privpub.metrics.mlp import fit_mlp_binary
from privpub.registry import register_metric
from privpub.types import Kind, as_binary_matrix
from privpub.validation import check_positive_int, check_rng

__all__ = ["accuracy_mlp_binary"]


@register_metric(
    "accuracy_mlp_binary",
    kinds=Kind.BINARY_MATRIX,
    higher_is_better=True,
    label="accuracy (MLP trained on release, original test split)",
)
def accuracy_mlp_binary(truth, release, *, max_iter: int = 200, rng=None) -> float:
    """Test accuracy of a 1-hidden-layer (10 ReLU) MLP trained on the release with the
    truth's labels (epasto2022 Fig. 4).

    Parameters
    ----------
    truth : LabelledMatrix
        The original matrix with ``labels`` (one per row, at most two distinct values),
        ``test_matrix`` and ``test_labels`` (e.g. dataset ``adult_binary_ml``).
    release : binary matrix
        The anonymised matrix, same shape as ``truth`` (rows in the same order).
    max_iter : int, default 200
        scikit-learn's default.
    rng : numpy.random.Generator, int or None
        Draws the ``random_state`` of the network (its initialisation and batch order).

    Returns
    -------
    float
        Accuracy on the test split, in [0, 1].
    """
    labels = getattr(truth, "labels", None)
    x_test = getattr(truth, "test_matrix", None)
    y_test = getattr(truth, "test_labels", None)
    if labels is None or x_test is None or y_test is None:
        raise PrivpubError(
            "accuracy_mlp_binary needs a labelled truth with a test split (a LabelledMatrix, "
            f"e.g. dataset adult_binary_ml), got {type_name(truth)}"
        )
    max_iter = check_positive_int(max_iter, "max_iter")
    rng = check_rng(rng)
    try:
        x_train = as_binary_matrix(release)
    except PrivpubError as exc:
        raise PrivpubError(f"release: {exc}") from None
    if x_train.shape != truth.shape:
        raise PrivpubError(f"release shape {x_train.shape} differs from truth {truth.shape}")
    if x_test.shape[1] != x_train.shape[1]:
        raise PrivpubError("the test split has a different number of columns")
    labels = np.asarray(labels)
    classes = np.unique(labels)
    if classes.size == 1:
        return float(np.mean(np.asarray(y_test) == classes[0]))
    if classes.size > 2:
        raise PrivpubError(f"accuracy_mlp_binary needs two classes, got {classes.size}")

    # scikit-learn's LabelBinarizer: sorted classes, the larger one is 1
    model = fit_mlp_binary(
        x_train,
        (labels == classes[1]).astype(np.int8),
        hidden=10,
        max_iter=max_iter,
        seed=int(rng.integers(0, 2**31 - 1)),
    )
    pred = classes[model.predict(as_binary_matrix(x_test))]
    return float(np.mean(pred == np.asarray(y_test)))
