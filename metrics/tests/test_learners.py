"""Accuracy of classifier releases: cross-validating the private learner (farias2021 Fig 6)."""

import numpy as np
import pandas as pd
import pytest

from privpub.errors import PrivpubError
from privpub.mechanisms.diffpid3 import diffpid3
from privpub.metrics.learners import accuracy_cv_learner, accuracy_in_sample
from privpub.registry import get_metric
from privpub.types import Attribute, Kind, Schema, Table


def table(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n, 2))
    y = np.where(x[:, 0] == 2, "yes", "no")
    df = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": y})
    schema = Schema((Attribute("a", "ordinal", (0, 1, 2)), Attribute("b", "ordinal", (0, 1, 2)),
                     Attribute("y", "categorical", ("no", "yes"))), class_attribute="y")
    return Table(df, schema)


def test_registered_for_classifiers():
    for name in ("accuracy_cv_learner", "accuracy_in_sample"):
        info = get_metric(name)
        assert info.kinds == (Kind.CLASSIFIER,) and info.higher_is_better


def test_cross_validates_the_learner():
    t = table()
    tree = diffpid3(t, epsilon=10.0, depth=2, rng=np.random.default_rng(0))
    acc = accuracy_cv_learner(t, tree, rng=np.random.default_rng(1))
    assert acc > 0.95
    assert acc == accuracy_cv_learner(t, tree, rng=np.random.default_rng(1))  # seeded
    assert accuracy_in_sample(t, tree) > 0.95
    noisy = diffpid3(t, epsilon=1e-4, depth=2, rng=np.random.default_rng(0))
    assert accuracy_cv_learner(t, noisy, n_folds=3, rng=np.random.default_rng(1)) < 0.9


def noisy_table(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=(n, 3))
    y = np.where((x[:, 0] + x[:, 1] > 3) ^ (rng.random(n) < 0.25), "yes", "no")
    df = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "y": y})
    schema = Schema(tuple(Attribute(k, "ordinal", (0, 1, 2, 3)) for k in "abc")
                    + (Attribute("y", "categorical", ("no", "yes")),), class_attribute="y")
    return Table(df, schema)


class _TablesOnly:
    """A DiffPID3 tree without ``encode_table``: the folds are cut as tables."""

    def __init__(self, tree):
        self.tree = tree

    def predict(self, table):
        return self.tree.predict(table)

    def refit(self, table, *, rng):
        return self.tree.refit(table, rng=rng)


# accuracy_cv_learner(noisy_table(2000, 3), diffpid3(..., epsilon=1, depth=3, rng=0), rng=1)
# as computed before the folds were cut from one encoding (every fold encoded again)
PINNED = {
    ("global", "ig"): 0.6545,
    ("global", "gini"): 0.6645,
    ("local", "ig"): 0.663,
    ("local", "gini"): 0.6645,
    ("shifted", "ig"): 0.664,
    ("shifted", "gini"): 0.6645,
}


@pytest.mark.parametrize("variant", ["global", "local", "shifted"])
@pytest.mark.parametrize("criterion", ["ig", "gini"])
def test_encoded_folds_give_the_same_accuracy(variant, criterion):
    t = noisy_table(2000, 3)
    tree = diffpid3(t, epsilon=1.0, depth=3, criterion=criterion, variant=variant,
                    rng=np.random.default_rng(0))
    acc = accuracy_cv_learner(t, tree, rng=np.random.default_rng(1))
    assert acc == accuracy_cv_learner(t, _TablesOnly(tree), rng=np.random.default_rng(1))
    assert acc == PINNED[(variant, criterion)]


class _NoRefit:
    def predict(self, table):
        return np.full(table.n_rows, "no", dtype=object)


def test_bad_input():
    t = table(50)
    assert accuracy_in_sample(t, _NoRefit()) == pytest.approx(np.mean(t.data["y"] == "no"))
    with pytest.raises(PrivpubError, match="refit"):
        accuracy_cv_learner(t, _NoRefit(), rng=0)
    with pytest.raises(PrivpubError, match="Table"):
        accuracy_cv_learner(t.data, _NoRefit(), rng=0)
    tree = diffpid3(t, epsilon=1.0, depth=1, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError, match="n_folds"):
        accuracy_cv_learner(t, tree, n_folds=1, rng=0)
    with pytest.raises(PrivpubError, match="rows"):
        accuracy_cv_learner(table(5), tree, n_folds=10, rng=0)
