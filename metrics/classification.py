"""Classification accuracy of models learnt from a released table (scikit-learn).

Two protocols:

- :func:`accuracy_cv`: k-fold cross-validation accuracy of a classifier trained *and*
  tested on the released table. qardaji2012 Sec. 4.2 / Fig. 3 evaluates RPS and Mondrian
  releases of Adult this way, with Naive Bayes and the C4.5 decision tree and 5 folds.
- :func:`accuracy_transfer`: train on the release, test on the original table.
  epasto2022 Sec. 6 ("Learning from anonymous data", Fig. 4) trains "a 1-layer, 10-hidden
  unit network with RELU activation nodes" on the anonymised Adult features and reports
  the accuracy on the original test data; farias2021 Sec. 6.2 likewise scores private
  decision trees on held-out original data.

Classifiers (``classifier=``)
-----------------------------
``"naive_bayes"``
    Per attribute kind, as Weka's NaiveBayes that qardaji2012 used: numeric attributes get
    a Gaussian likelihood (:class:`~sklearn.naive_bayes.GaussianNB`), ordinal and categorical
    attributes a Laplace-smoothed categorical likelihood over the schema domain
    (:class:`~sklearn.naive_bayes.CategoricalNB`, ``alpha=1``). With both kinds present the
    two joint log-likelihoods are added and the class log-prior counted once.
``"decision_tree"``
    C4.5-like: :class:`~sklearn.tree.DecisionTreeClassifier` with ``criterion="entropy"``
    (information gain) and ``min_samples_leaf=2`` (C4.5's ``-M 2``). scikit-learn has
    neither C4.5's multiway categorical splits (categorical attributes are one-hot encoded,
    giving binary "= value" splits) nor its pessimistic-error pruning, so accuracies can be a
    little lower than Weka's J48.
``"majority"``
    Predicts the most frequent class of the training rows (Weka's ZeroR): qardaji2012
    Fig. 3's "baseline accuracy [...] if we take a simple majority vote for the class
    label. For the Adult dataset, this is 0.75".
``"mlp"``
    ``MLPClassifier(hidden_layer_sizes=(10,), activation="relu")`` on standardised features
    (epasto2022 Sec. 6; standardisation is not stated in the paper but an MLP on raw Adult
    ages and hours does not train), default Adam solver and ``max_iter=200``.

Encoding a :class:`~privpub.types.Table` via its :class:`~privpub.types.Schema`
-------------------------------------------------------------------------------
Features are every schema attribute except ``schema.class_attribute``. Numeric attributes
are used as they are; ordinal attributes by their index in ``domain`` (the order); categorical
attributes are one-hot encoded over ``domain`` (``categorical="onehot"``, default) or
replaced by their index in ``domain`` (``categorical="ordinal"``; arbitrary order). Naive
Bayes uses domain indices for both ordinal and categorical attributes. An ordinal or
categorical attribute with an empty domain takes the sorted values seen in the tables
compared. A value outside the domain, or a missing value, is an error.

References
----------
.. [qardaji2012] W. Qardaji, N. Li. Recursive Partitioning and Summarization. ASIACCS 2012,
   Sec. 4.2, Fig. 3.
.. [epasto2022] A. Epasto et al. Smooth Anonymity for Sparse Graphs. 2022, Sec. 6 and App. D.
.. [farias2021] V. Farias et al. Local Dampening. PVLDB 14(4), 2021, Sec. 6.2.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privpub.algorithms.encoding import domain_codes
from privpub.errors import PrivpubError
from privpub.metrics._checks import type_name
from privpub.registry import register_metric
from privpub.types import Kind, Schema, Table
from privpub.validation import check_positive_int, check_rng

__all__ = [
    "CLASSIFIERS",
    "accuracy_cv",
    "accuracy_transfer",
    "accuracy_cv_nb",
    "accuracy_cv_tree",
    "accuracy_cv_mlp",
    "accuracy_cv_majority",
    "accuracy_transfer_nb",
    "accuracy_transfer_tree",
    "accuracy_transfer_mlp",
    "EncodedTable",
    "encode_table",
]

CLASSIFIERS = ("naive_bayes", "decision_tree", "mlp", "majority")
_ENCODINGS = ("onehot", "ordinal")


# --------------------------------------------------------------------------- encoding
@dataclass(frozen=True)
class EncodedTable:
    """A table encoded for scikit-learn.

    Attributes
    ----------
    numeric : ndarray, shape (n, p_num)
        Numeric attributes as floats.
    ordinal : ndarray, shape (n, p_ord)
        Ordinal attributes as their index in the domain order.
    categorical : ndarray, shape (n, p_cat)
        Categorical attributes as their index in the domain.
    ordinal_levels, categorical_levels : tuple of int
        Domain sizes.
    y : ndarray, shape (n,)
        Class labels as indices into ``classes``.
    classes : tuple
        The class values.
    """

    numeric: np.ndarray
    ordinal: np.ndarray
    categorical: np.ndarray
    ordinal_levels: tuple[int, ...]
    categorical_levels: tuple[int, ...]
    y: np.ndarray
    classes: tuple

    def design(self, categorical: str = "onehot") -> np.ndarray:
        """Feature matrix for trees and MLPs: numeric, ordinal index, categorical one-hot."""
        parts = [self.numeric, self.ordinal.astype(float)]
        if categorical == "onehot":
            for j, levels in enumerate(self.categorical_levels):
                parts.append(np.eye(levels)[self.categorical[:, j]])
        else:
            parts.append(self.categorical.astype(float))
        return np.hstack(parts)

    def take(self, rows: np.ndarray) -> EncodedTable:
        return EncodedTable(
            self.numeric[rows],
            self.ordinal[rows],
            self.categorical[rows],
            self.ordinal_levels,
            self.categorical_levels,
            self.y[rows],
            self.classes,
        )


def _sorted_levels(values) -> tuple:
    uniq = pd.unique(pd.Series(values).dropna())
    try:
        return tuple(sorted(uniq))
    except TypeError:
        return tuple(sorted(uniq, key=str))


def _codes(col: pd.Series, levels: tuple, name: str, role: str) -> np.ndarray:
    codes = domain_codes(col, levels)
    bad = codes < 0
    if bad.any():
        shown = ", ".join(repr(v) for v in pd.unique(col[bad])[:5])
        raise PrivpubError(
            f"{role} attribute {name!r} has {int(bad.sum())} values outside its domain "
            f"(or missing): {shown}; domain: {list(levels)[:10]}"
        )
    return codes


def _features_and_class(schema: Schema, role: str):
    cls = schema.class_attribute
    if cls is None:
        raise PrivpubError(
            f"{role} table's schema names no class attribute (Schema.class_attribute); "
            "classification accuracy needs one"
        )
    features = [a for a in schema.attributes if a.name != cls]
    if not features:
        raise PrivpubError(f"{role} table has no attribute besides the class {cls!r}")
    return features, cls


def encode_table(table: Table, *, schema: Schema | None = None, also=(), role="table"):
    """Encode ``table`` (and the tables in ``also``, on the same levels) for scikit-learn.

    Parameters
    ----------
    table : Table
    schema : Schema, optional
        Attribute kinds, domains and class attribute to use (default: ``table.schema``).
    also : sequence of (Table, str)
        Further ``(table, role)`` pairs encoded with the same levels (e.g. the release and the
        truth of :func:`accuracy_transfer`); empty domains are taken from all tables together.
    role : str
        Name of ``table`` in error messages.

    Returns
    -------
    list of EncodedTable
        One per table, ``table`` first.
    """
    schema = table.schema if schema is None else schema
    features, cls = _features_and_class(schema, role)
    tables = [(table, role), *also]
    for t, r in tables:
        if not isinstance(t, Table):
            raise PrivpubError(f"{r} must be a Table, got {type_name(t)}")
        missing = [a.name for a in features if a.name not in t.data.columns]
        missing += [cls] if cls not in t.data.columns else []
        if missing:
            raise PrivpubError(f"{r} table lacks columns {missing}")
        if len(t.data) == 0:
            raise PrivpubError(f"{r} table has no rows")

    def levels_of(attr_name, domain):
        if domain:
            if len(set(domain)) != len(domain):
                raise PrivpubError(f"attribute {attr_name!r} has repeated values in its domain")
            return tuple(domain)
        return _sorted_levels(pd.concat([t.data[attr_name] for t, _ in tables]))

    levels = {a.name: levels_of(a.name, a.domain) for a in features if a.kind != "numeric"}
    class_levels = levels_of(cls, schema[cls].domain if schema[cls].kind != "numeric" else ())

    out = []
    for t, r in tables:
        df = t.data
        n = len(df)
        num_cols, ord_cols, cat_cols = [], [], []
        for a in features:
            if a.kind == "numeric":
                try:
                    v = df[a.name].to_numpy(dtype=float)
                except (TypeError, ValueError):
                    raise PrivpubError(f"{r} numeric attribute {a.name!r} is not numeric") from None
                if not np.isfinite(v).all():
                    raise PrivpubError(
                        f"{r} numeric attribute {a.name!r} has {int((~np.isfinite(v)).sum())} "
                        "NaN or infinite values"
                    )
                num_cols.append(v)
            elif a.kind == "ordinal":
                ord_cols.append(_codes(df[a.name], levels[a.name], a.name, r))
            else:
                cat_cols.append(_codes(df[a.name], levels[a.name], a.name, r))
        out.append(
            EncodedTable(
                numeric=np.column_stack(num_cols) if num_cols else np.empty((n, 0)),
                ordinal=np.column_stack(ord_cols) if ord_cols else np.empty((n, 0), np.int64),
                categorical=(np.column_stack(cat_cols) if cat_cols else np.empty((n, 0), np.int64)),
                ordinal_levels=tuple(len(levels[a.name]) for a in features if a.kind == "ordinal"),
                categorical_levels=tuple(
                    len(levels[a.name]) for a in features if a.kind == "categorical"
                ),
                y=_codes(df[cls], class_levels, cls, r),
                classes=class_levels,
            )
        )
    return out


# --------------------------------------------------------------------------- classifiers
class _MixedNB:
    """Naive Bayes with Gaussian numeric and categorical (Laplace) discrete likelihoods."""

    def fit(self, enc: EncodedTable):
        from sklearn.naive_bayes import CategoricalNB, GaussianNB

        y = enc.y
        self.classes_, counts = np.unique(y, return_counts=True)
        self.log_prior_ = np.log(counts / counts.sum())
        self.gauss_ = self.cat_ = None
        # All-constant numeric features carry no information and would give GaussianNB a
        # zero variance floor (var_smoothing * max variance = 0): leave them out.
        if enc.numeric.shape[1] and np.var(enc.numeric, axis=0).max() > 0:
            self.gauss_ = GaussianNB().fit(enc.numeric, y)
        codes = np.hstack([enc.ordinal, enc.categorical])
        if codes.shape[1]:
            levels = np.array(enc.ordinal_levels + enc.categorical_levels)
            self.cat_ = CategoricalNB(alpha=1.0, min_categories=levels).fit(codes, y)
        return self

    def joint_log_likelihood(self, enc: EncodedTable) -> np.ndarray:
        jll = np.tile(self.log_prior_, (len(enc.y), 1))
        if self.gauss_ is not None:
            jll += self.gauss_.predict_joint_log_proba(enc.numeric) - self.log_prior_
        if self.cat_ is not None:
            codes = np.hstack([enc.ordinal, enc.categorical])
            jll += self.cat_.predict_joint_log_proba(codes) - self.log_prior_
        return jll

    def predict(self, enc: EncodedTable) -> np.ndarray:
        return self.classes_[np.argmax(self.joint_log_likelihood(enc), axis=1)]


def _fit_predict(
    classifier: str, train: EncodedTable, test: EncodedTable, *, categorical: str, seed: int,
    designs: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Train on ``train`` and return predicted class indices for ``test``. ``designs``:
    their feature matrices (``design(categorical)``) if already at hand."""
    classes, counts = np.unique(train.y, return_counts=True)
    if classes.size == 1 or classifier == "majority":  # (MLPClassifier refuses one class)
        return np.full(len(test.y), classes[np.argmax(counts)])
    if classifier == "naive_bayes":
        return _MixedNB().fit(train).predict(test)
    if designs is None:
        designs = train.design(categorical), test.design(categorical)
    x_train, x_test = designs
    if classifier == "decision_tree":
        from sklearn.tree import DecisionTreeClassifier

        model = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, random_state=seed)
    else:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        model = make_pipeline(
            StandardScaler(),
            MLPClassifier(hidden_layer_sizes=(10,), activation="relu", random_state=seed),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return model.fit(x_train, train.y).predict(x_test)
    return model.fit(x_train, train.y).predict(x_test)


def _check_options(classifier, categorical) -> None:
    if classifier not in CLASSIFIERS:
        raise PrivpubError(f"unknown classifier {classifier!r}; choose one of {CLASSIFIERS}")
    if categorical not in _ENCODINGS:
        raise PrivpubError(f"categorical must be one of {_ENCODINGS}, got {categorical!r}")


def _check_tables(truth, release) -> None:
    for role, t in (("truth", truth), ("release", release)):
        if not isinstance(t, Table):
            raise PrivpubError(f"{role} must be a Table, got {type_name(t)}")


# --------------------------------------------------------------------------- metrics
@register_metric(
    "accuracy_cv", kinds=Kind.TABLE, higher_is_better=True, label="accuracy (CV on release)"
)
def accuracy_cv(
    truth: Table,
    release: Table,
    *,
    classifier: str = "naive_bayes",
    n_folds: int = 5,
    categorical: str = "onehot",
    rng=None,
) -> float:
    """k-fold cross-validation accuracy of a classifier on the release (qardaji2012 Sec. 4.2).

    qardaji2012 Sec. 4.2 / Fig. 3: "we performed (k = 5)-fold cross validation [...] which
    partitions the dataset into k folds, then repeats the algorithm k times, each time
    keeping one fold for testing and using the others as the learning dataset", with Naive
    Bayes (Fig. 3a) and C4.5 (Fig. 3b), on the *anonymised* dataset. Folds are shuffled and
    stratified by class (as Weka's cross-validation), falling back to plain shuffled folds
    when a class has fewer than ``n_folds`` rows. The accuracy is pooled over the folds:
    correct predictions / rows (Weka's figure).

    Parameters
    ----------
    truth : Table
        The original table; not used to train or test (kept for the metric signature).
    release : Table
        The released table, with ``schema.class_attribute`` set.
    classifier : {"naive_bayes", "decision_tree", "mlp"}, default "naive_bayes"
        See the module docstring.
    n_folds : int, default 5
    categorical : {"onehot", "ordinal"}, default "onehot"
        Encoding of categorical attributes for trees and MLPs.
    rng : numpy.random.Generator, int or None
        Seeds the fold split and the classifier.

    Returns
    -------
    float
        Accuracy in [0, 1].
    """
    _check_options(classifier, categorical)
    _check_tables(truth, release)
    n_folds = check_positive_int(n_folds, "n_folds")
    if n_folds < 2:
        raise PrivpubError(f"n_folds must be >= 2, got {n_folds}")
    rng = check_rng(rng)
    (enc,) = encode_table(release, role="release")
    n = len(enc.y)
    if n < n_folds:
        raise PrivpubError(f"release has {n} rows, fewer than n_folds = {n_folds}")
    split_seed, model_seed = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))

    from sklearn.model_selection import KFold, StratifiedKFold

    _, class_counts = np.unique(enc.y, return_counts=True)
    if class_counts.min() >= n_folds:
        folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=split_seed)
    else:
        folds = KFold(n_splits=n_folds, shuffle=True, random_state=split_seed)
    # the feature matrix of trees and MLPs, built once: a fold's rows of it are the matrix
    # of the fold (the encoding is row by row)
    x = enc.design(categorical) if classifier in ("decision_tree", "mlp") else None
    correct = 0
    for train_idx, test_idx in folds.split(np.zeros(n), enc.y):
        test = enc.take(test_idx)
        pred = _fit_predict(
            classifier, enc.take(train_idx), test, categorical=categorical, seed=model_seed,
            designs=None if x is None else (x[train_idx], x[test_idx]),
        )
        correct += int(np.sum(pred == test.y))
    return correct / n


@register_metric(
    "accuracy_transfer",
    kinds=Kind.TABLE,
    higher_is_better=True,
    label="accuracy (train release, test original)",
)
def accuracy_transfer(
    truth: Table,
    release: Table,
    *,
    classifier: str = "mlp",
    categorical: str = "onehot",
    rng=None,
) -> float:
    """Accuracy on the original table of a classifier trained on the release (epasto2022 Sec. 6).

    epasto2022 Sec. 6 and App. D ("Learning from anonymous data"): "we train the model on
    the anonymized features in output from the algorithms and report the prediction on the
    original test dataset", with a 1-layer, 10-hidden-unit ReLU network (the default
    ``classifier="mlp"``). The whole ``truth`` table is the test set: to test on held-out
    rows, as the paper does, give the runner an original table that is the test split and
    a release made from the training split (a data-layer choice, not the metric's).
    The encoding (domains, levels) follows the truth's schema.

    Parameters
    ----------
    truth : Table
        The original table (test set), with ``schema.class_attribute`` set.
    release : Table
        The released table (training set); must have the truth's feature and class columns.
    classifier : {"naive_bayes", "decision_tree", "mlp"}, default "mlp"
    categorical : {"onehot", "ordinal"}, default "onehot"
    rng : numpy.random.Generator, int or None
        Seeds the classifier.

    Returns
    -------
    float
        Accuracy in [0, 1].
    """
    _check_options(classifier, categorical)
    _check_tables(truth, release)
    rng = check_rng(rng)
    train, test = encode_table(
        release, schema=truth.schema, also=[(truth, "truth")], role="release"
    )
    seed = int(rng.integers(0, 2**31 - 1))
    pred = _fit_predict(classifier, train, test, categorical=categorical, seed=seed)
    return float(np.mean(pred == test.y))


# --------------------------------------------------------------------------- named variants
# Experiment specs list metrics by name only, so each (protocol, classifier) pair that a
# paper figure uses is also registered under its own name.
_SHORT = {
    "naive_bayes": ("nb", "naive Bayes"),
    "decision_tree": ("tree", "C4.5-like tree"),
    "mlp": ("mlp", "MLP"),
    "majority": ("majority", "majority vote"),
}


def _cv_variant(classifier: str):
    short, pretty = _SHORT[classifier]

    def metric(truth, release, *, n_folds: int = 5, categorical: str = "onehot", rng=None):
        return accuracy_cv(
            truth,
            release,
            classifier=classifier,
            n_folds=n_folds,
            categorical=categorical,
            rng=rng,
        )

    metric.__name__ = metric.__qualname__ = f"accuracy_cv_{short}"
    metric.__doc__ = (
        f"Cross-validation accuracy of {pretty} trained and tested on the release.\n\n"
        f"    :func:`accuracy_cv` with ``classifier={classifier!r}``; "
        "see there for parameters and references (qardaji2012 Sec. 4.2)."
    )
    return register_metric(
        metric.__name__,
        kinds=Kind.TABLE,
        higher_is_better=True,
        label=f"accuracy ({pretty}, CV on release)",
    )(metric)


def _transfer_variant(classifier: str):
    short, pretty = _SHORT[classifier]

    def metric(truth, release, *, categorical: str = "onehot", rng=None):
        return accuracy_transfer(
            truth, release, classifier=classifier, categorical=categorical, rng=rng
        )

    metric.__name__ = metric.__qualname__ = f"accuracy_transfer_{short}"
    metric.__doc__ = (
        f"Accuracy on the original of {pretty} trained on the release.\n\n    "
        f":func:`accuracy_transfer` with ``classifier={classifier!r}``; see there for "
        "parameters and references (epasto2022 Sec. 6)."
    )
    return register_metric(
        metric.__name__,
        kinds=Kind.TABLE,
        higher_is_better=True,
        label=f"accuracy ({pretty}, train release / test original)",
    )(metric)


accuracy_cv_nb = _cv_variant("naive_bayes")
accuracy_cv_tree = _cv_variant("decision_tree")
accuracy_cv_mlp = _cv_variant("mlp")
accuracy_cv_majority = _cv_variant("majority")
accuracy_transfer_nb = _transfer_variant("naive_bayes")
accuracy_transfer_tree = _transfer_variant("decision_tree")
accuracy_transfer_mlp = _transfer_variant("mlp")
