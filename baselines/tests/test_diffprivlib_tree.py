"""diffprivlib's DecisionTreeClassifier as an outside reference (farias2021 Fig. 6):
predictions, seeding, ledger, the noise-free limit and the skip when diffprivlib is missing."""

import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import privpub.baselines.diffprivlib_tree as dpt
from privpub.baselines.diffprivlib_tree import CAVEAT, DiffprivlibTree, diffprivlib_tree
from privpub.errors import NotApplicableError, PrivpubError
from privpub.experiments.runner import run_trial
from privpub.experiments.spec import Cell
from privpub.ledger import PrivacyLedger
from privpub.metrics.learners import accuracy_cv_learner
from privpub.noise import noise_off
from privpub.registry import RECORD_DP, get_mechanism
from privpub.types import Attribute, Kind, Schema, Table

_DIFFPRIVLIB = ("diffprivlib", "diffprivlib.accountant", "diffprivlib.models",
                "diffprivlib.utils")


def table(n=240, seed=0) -> Table:
    """Numeric, ordinal and categorical attributes; the class follows ``x`` and ``grade``."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    grade = rng.integers(0, 3, n)
    colour = rng.choice(["red", "green", "blue"], n)
    cls = np.where(x + 3 * grade > 8, "yes", "no")
    schema = Schema(
        (
            Attribute("x", "numeric", (0.0, 10.0)),
            Attribute("grade", "ordinal", (0, 1, 2)),
            Attribute("colour", "categorical", ("red", "green", "blue")),
            Attribute("label", "categorical", ("no", "yes")),
        ),
        class_attribute="label",
    )
    return Table(pd.DataFrame({"x": x, "grade": grade, "colour": colour, "label": cls}), schema)


@pytest.fixture
def no_diffprivlib(monkeypatch):
    """diffprivlib not importable (as if not installed), whatever is cached."""
    for name in _DIFFPRIVLIB:
        monkeypatch.setitem(sys.modules, name, None)


def test_registered_like_diffpid3_with_its_caveat():
    info = get_mechanism("diffprivlib_tree")
    ref = get_mechanism("global_diffpid3")
    assert (info.input_kind, info.output_kind, info.privacy) == (
        ref.input_kind, ref.output_kind, ref.privacy) == (Kind.TABLE, Kind.CLASSIFIER, RECORD_DP)
    assert info.role == "baseline" and set(info.parameters) == {"epsilon", "depth"}
    assert info.caveat_for({}) == CAVEAT
    assert "outside reference" in CAVEAT.lower() and "scikit-learn" in CAVEAT


def test_predicts_one_class_value_per_row():
    t = table()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # bounds and classes come from the schema: no leak
        tree = diffprivlib_tree(t, epsilon=1.0, depth=3, rng=np.random.default_rng(0))
    assert isinstance(tree, DiffprivlibTree)
    pred = tree.predict(t)
    assert pred.shape == (len(t.data),)
    assert set(pred) <= {"no", "yes"}
    other = table(n=17, seed=5)
    assert tree.predict(other).shape == (17,)
    assert tree.info == {"n_leaves": 8, "tree_depth": 3}  # a complete tree of that depth


def test_a_large_budget_learns_something():
    t = table(n=600)
    acc = accuracy_cv_learner(t, diffprivlib_tree(t, epsilon=50.0, depth=5, rng=1), rng=2)
    majority = (t.data["label"] == "yes").mean()
    assert acc > max(majority, 1 - majority)


def test_same_seed_same_tree_other_seed_other_tree():
    t = table()

    def thresholds(seed):
        tree = diffprivlib_tree(t, epsilon=0.5, depth=4, rng=np.random.default_rng(seed))
        return tree.model.tree_.threshold.copy(), tree.predict(t)

    a, b = thresholds(3), thresholds(3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], thresholds(4)[0])
    # the cross-validated accuracy is seeded too
    tree = diffprivlib_tree(t, epsilon=0.5, depth=4, rng=np.random.default_rng(3))
    assert accuracy_cv_learner(t, tree, rng=9) == accuracy_cv_learner(t, tree, rng=9)


def test_the_ledger_records_epsilon_spent_on_the_leaves():
    ledger = PrivacyLedger(0.7)
    diffprivlib_tree(table(), epsilon=0.7, depth=2, rng=0, ledger=ledger)
    assert ledger.spent == pytest.approx(0.7) and ledger.remaining == 0
    leaf = [e for e in ledger.entries if e.primitive == "diffprivlib.PermuteAndFlip"]
    assert len(leaf) == 1 and leaf[0].epsilon == pytest.approx(0.7)
    assert leaf[0].sensitivity == 1.0 and "4 leaf classes" in leaf[0].path
    with pytest.raises(PrivpubError):  # a ledger for another budget
        diffprivlib_tree(table(), epsilon=1.0, depth=2, rng=0, ledger=PrivacyLedger(0.5))


def test_noise_free_limit_does_not_depend_on_the_seed_and_refits_noise_free():
    t = table()
    with noise_off():
        a = diffprivlib_tree(t, epsilon=0.01, depth=3, rng=1)
        b = diffprivlib_tree(t, epsilon=0.01, depth=3, rng=2)
    assert a.noise_free and b.noise_free
    np.testing.assert_array_equal(a.predict(t), b.predict(t))
    # every leaf holding records is labelled with its majority class (no noise)
    leaves = a.model.apply(a.columns.encode(t)[0])
    y = t.data["label"].to_numpy(dtype=object)
    for leaf in np.unique(leaves):
        classes, counts = np.unique(y[leaves == leaf], return_counts=True)
        assert a.predict(t)[leaves == leaf][0] in classes[counts == counts.max()]
    # the cross-validation's refits stay noise-free (outside the noise_off block)
    assert a.refit(t, rng=5).noise_free
    assert accuracy_cv_learner(t, a, rng=3) == accuracy_cv_learner(t, b, rng=3)
    assert not diffprivlib_tree(t, epsilon=0.01, depth=3, rng=1).noise_free


def test_bad_inputs():
    t = table()
    with pytest.raises(NotApplicableError, match="max_depth >= 1"):
        diffprivlib_tree(t, epsilon=1.0, depth=0, rng=0)
    with pytest.raises(PrivpubError):
        diffprivlib_tree(t, epsilon=0.0, depth=2, rng=0)
    with pytest.raises(PrivpubError, match="outside its domain"):
        bad = t.data.copy()
        bad.loc[0, "colour"] = "purple"
        diffprivlib_tree(Table(bad, t.schema), epsilon=1.0, depth=2, rng=0)
    with pytest.raises(PrivpubError, match="class"):
        diffprivlib_tree(Table(t.data, Schema(t.schema.attributes)), epsilon=1.0, depth=2, rng=0)


def test_compat_shim_only_adds_missing_names(monkeypatch):
    from sklearn.tree import _tree

    monkeypatch.delattr(_tree, "DOUBLE", raising=False)
    monkeypatch.setattr(_tree, "DTYPE", "kept", raising=False)
    dpt.sklearn_tree_compat()
    assert _tree.DOUBLE is np.float64 and _tree.DTYPE == "kept"


def test_without_diffprivlib_the_call_says_why(no_diffprivlib):
    with pytest.raises(NotApplicableError, match=r"diffprivlib>=0\.6\.6.*\[reference\]"):
        diffprivlib_tree(table(), epsilon=1.0, depth=2, rng=0)


def test_without_diffprivlib_the_runner_skips_the_cell(no_diffprivlib):
    cell = Cell("gaussian_mixture", {"n": 200}, "diffprivlib_tree", "diffprivlib tree",
                {"epsilon": 1.0, "depth": 2})
    rows = run_trial(cell, 0, experiment="t", scale="smoke", metrics=["accuracy_cv_learner"],
                     base_seed=0, data_dir=None, measure_memory=False)
    assert len(rows) == 1 and rows[0]["status"] == "skipped"
    assert "cannot be imported" in rows[0]["error"] and "rerun=true" in rows[0]["error"]
