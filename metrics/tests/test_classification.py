"""Classifier accuracy on released tables (qardaji2012 Sec. 4.2, epasto2022 Sec. 6)."""

import numpy as np
import pandas as pd
import pytest

from privpub.errors import PrivpubError
from privpub.metrics.classification import (
    CLASSIFIERS,
    _MixedNB,
    accuracy_cv,
    accuracy_cv_nb,
    accuracy_cv_tree,
    accuracy_transfer,
    accuracy_transfer_mlp,
    encode_table,
)
from privpub.types import Attribute, Schema, Table

SCHEMA = Schema(
    (
        Attribute("age", "numeric", (0, 100)),
        Attribute("edu", "ordinal", ("low", "mid", "high")),
        Attribute("color", "categorical", ("red", "green", "blue")),
        Attribute("label", "categorical", ("no", "yes")),
    ),
    class_attribute="label",
)


def make_table(n=400, seed=0, flip=False, schema=SCHEMA):
    """label = yes iff age > 50 or color == blue: learnable by every classifier."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(0, 100, n)
    edu = rng.choice(["low", "mid", "high"], n)
    color = rng.choice(["red", "green", "blue"], n)
    yes = (age > 50) | (color == "blue")
    if flip:
        yes = ~yes
    df = pd.DataFrame({"age": age, "edu": edu, "color": color, "label": np.where(yes, "yes", "no")})
    return Table(df, schema)


def test_encoding_follows_schema():
    t = Table(
        pd.DataFrame(
            {
                "age": [30.0, 60.0],
                "edu": ["high", "low"],
                "color": ["blue", "red"],
                "label": ["yes", "no"],
            }
        ),
        SCHEMA,
    )
    (enc,) = encode_table(t)
    np.testing.assert_array_equal(enc.numeric, [[30.0], [60.0]])
    np.testing.assert_array_equal(enc.ordinal, [[2], [0]])  # order index
    np.testing.assert_array_equal(enc.categorical, [[2], [0]])
    np.testing.assert_array_equal(enc.y, [1, 0])
    np.testing.assert_array_equal(
        enc.design("onehot"), [[30.0, 2.0, 0, 0, 1], [60.0, 0.0, 1, 0, 0]]
    )
    np.testing.assert_array_equal(enc.design("ordinal"), [[30.0, 2.0, 2.0], [60.0, 0.0, 0.0]])


LEARNERS = [c for c in CLASSIFIERS if c != "majority"]  # the majority vote learns nothing


@pytest.mark.parametrize("classifier", LEARNERS)
def test_cv_learns_a_learnable_release(classifier):
    t = make_table()
    acc = accuracy_cv(t, t, classifier=classifier, rng=np.random.default_rng(0))
    assert acc > 0.85


@pytest.mark.parametrize("classifier", CLASSIFIERS)
def test_cv_is_seeded(classifier):
    t = make_table(n=200)
    a = accuracy_cv(t, t, classifier=classifier, rng=np.random.default_rng(5))
    b = accuracy_cv(t, t, classifier=classifier, rng=np.random.default_rng(5))
    assert a == b


def test_cv_uses_the_release_not_the_truth():
    truth, release = make_table(seed=1), make_table(seed=2, flip=True)
    # the release's (flipped) rule is learnt and tested on the release itself: high accuracy
    assert accuracy_cv(truth, release, classifier="decision_tree", rng=0) > 0.85


@pytest.mark.parametrize("classifier", LEARNERS)
def test_transfer_tests_on_the_truth(classifier):
    truth = make_table(seed=1)
    good = accuracy_transfer(truth, make_table(seed=2), classifier=classifier, rng=0)
    bad = accuracy_transfer(truth, make_table(seed=2, flip=True), classifier=classifier, rng=0)
    assert good > 0.85
    assert bad < 0.15  # a release with flipped labels teaches the opposite rule


def test_random_labels_give_chance_accuracy():
    t = make_table(n=600, seed=3)
    rng = np.random.default_rng(0)
    noise = t.data.assign(label=rng.choice(["no", "yes"], len(t.data)))
    acc = accuracy_cv(t, Table(noise, SCHEMA), classifier="naive_bayes", rng=1)
    assert 0.35 < acc < 0.65


def test_single_class_release_predicts_that_class():
    t = make_table(n=100)
    one = Table(t.data.assign(label="no"), SCHEMA)
    assert accuracy_cv(t, one, classifier="mlp", rng=0) == 1.0
    expected = np.mean(t.data["label"] == "no")
    assert accuracy_transfer(t, one, classifier="mlp", rng=0) == pytest.approx(expected)


def test_mixed_naive_bayes_matches_hand_computation():
    t = make_table(n=60, seed=4)
    (enc,) = encode_table(t)
    jll = _MixedNB().fit(enc).joint_log_likelihood(enc)
    # independent computation: Gaussian (sklearn's variance floor) + Laplace-smoothed counts
    df, y = t.data, enc.y
    eps = 1e-9 * np.var(df["age"].to_numpy())
    expected = np.zeros((len(df), 2))
    for c in (0, 1):
        rows = y == c
        expected[:, c] += np.log(rows.mean())
        a = df["age"].to_numpy()[rows]
        mu, var = a.mean(), a.var() + eps
        expected[:, c] += -0.5 * np.log(2 * np.pi * var) - (df["age"] - mu) ** 2 / (2 * var)
        for codes, levels in ((enc.ordinal[:, 0], 3), (enc.categorical[:, 0], 3)):
            counts = np.bincount(codes[rows], minlength=levels)
            expected[:, c] += np.log((counts[codes] + 1) / (rows.sum() + levels))
    np.testing.assert_allclose(jll, expected, rtol=1e-6)


def test_naive_bayes_constant_numeric_column():
    t = make_table(n=100)
    const = Table(t.data.assign(age=5.0), SCHEMA)
    acc = accuracy_cv(t, const, classifier="naive_bayes", rng=0)
    assert 0.0 <= acc <= 1.0 and np.isfinite(acc)


def test_unseen_category_in_a_training_fold_is_fine():
    # 'high' appears once: some training folds never see it, the domain still covers it
    t = make_table(n=50)
    df = t.data.assign(edu="low")
    df.loc[0, "edu"] = "high"
    assert 0 <= accuracy_cv(t, Table(df, SCHEMA), classifier="naive_bayes", rng=0) <= 1


def test_named_variants():
    t = make_table(n=200)
    assert accuracy_cv_nb(t, t, rng=3) == accuracy_cv(t, t, classifier="naive_bayes", rng=3)
    assert accuracy_cv_tree(t, t, rng=3) == accuracy_cv(t, t, classifier="decision_tree", rng=3)
    assert accuracy_transfer_mlp(t, t, rng=3) == accuracy_transfer(t, t, classifier="mlp", rng=3)


def test_empty_domain_takes_observed_values():
    schema = Schema(
        (Attribute("c", "categorical"), Attribute("y", "categorical")), class_attribute="y"
    )
    truth = Table(pd.DataFrame({"c": ["a", "b"] * 20, "y": ["p", "q"] * 20}), schema)
    release = Table(pd.DataFrame({"c": ["b", "a"] * 20, "y": ["p", "q"] * 20}), schema)
    assert accuracy_transfer(truth, release, classifier="decision_tree", rng=0) == 0.0
    assert accuracy_transfer(truth, truth, classifier="decision_tree", rng=0) == 1.0


# --------------------------------------------------------------------------- errors
def test_missing_class_attribute():
    schema = Schema(SCHEMA.attributes)  # no class attribute
    t = make_table(schema=schema)
    with pytest.raises(PrivpubError, match="names no class attribute"):
        accuracy_cv(t, t, rng=0)


def test_value_outside_domain():
    t = make_table(n=50)
    bad = Table(t.data.assign(color="purple"), SCHEMA)
    with pytest.raises(PrivpubError, match="release attribute 'color' has 50 values outside"):
        accuracy_transfer(t, bad, rng=0)


def test_nan_numeric_value():
    t = make_table(n=50)
    df = t.data.copy()
    df.loc[3, "age"] = np.nan
    with pytest.raises(PrivpubError, match="release numeric attribute 'age' has 1 NaN"):
        accuracy_cv(t, Table(df, SCHEMA), rng=0)


def test_bad_options():
    t = make_table(n=50)
    with pytest.raises(PrivpubError, match="unknown classifier 'svm'"):
        accuracy_cv(t, t, classifier="svm", rng=0)
    with pytest.raises(PrivpubError, match="categorical must be"):
        accuracy_transfer(t, t, categorical="hash", rng=0)
    with pytest.raises(PrivpubError, match="n_folds must be >= 2"):
        accuracy_cv(t, t, n_folds=1, rng=0)
    small = Table(t.data.iloc[:3], SCHEMA)
    with pytest.raises(PrivpubError, match="fewer than n_folds"):
        accuracy_cv(t, small, rng=0)
    with pytest.raises(PrivpubError, match="must be a Table"):
        accuracy_cv(t, t.data, rng=0)


def test_release_missing_columns():
    t = make_table(n=50)
    release = Table(
        t.data.drop(columns=["edu"]),
        Schema((SCHEMA["age"], SCHEMA["color"], SCHEMA["label"]), class_attribute="label"),
    )
    with pytest.raises(PrivpubError, match=r"release table lacks columns \['edu'\]"):
        accuracy_transfer(t, release, rng=0)


def test_majority_vote_accuracy_is_the_majority_share_on_adult_like_data():
    import numpy as np
    import pandas as pd

    from privpub.metrics.classification import accuracy_cv_majority
    from privpub.types import Attribute, Schema, Table

    rng = np.random.default_rng(0)
    y = np.where(rng.random(2000) < 0.75, "<=50K", ">50K")
    frame = pd.DataFrame({"age": rng.integers(17, 90, 2000).astype(float), "salary": y})
    schema = Schema(
        (
            Attribute("age", "numeric", (17, 90)),
            Attribute("salary", "categorical", ("<=50K", ">50K")),
        ),
        class_attribute="salary",
    )
    table = Table(frame, schema)
    share = float(np.mean(y == "<=50K"))
    assert accuracy_cv_majority(table, table, rng=1) == pytest.approx(share, abs=1e-12)


# --------------------------------------------------------------------------- fast paths
def test_codes_and_fold_designs_equal_the_direct_encoding():
    """``_codes`` (privpub.algorithms.encoding.domain_codes) gives what
    ``pd.Index(levels).get_indexer`` gives on the values, and a fold's rows of the whole
    design matrix are the fold's own design: accuracy_cv builds it once."""
    from privpub.metrics.classification import _codes, _fit_predict, encode_table

    rng = np.random.default_rng(0)
    levels = ("a", "b", "c", "d")
    values = rng.choice(levels, 300)
    for col in (pd.Series(values), pd.Series(pd.Categorical(values, categories=levels[::-1])),
                pd.Series(rng.integers(0, 4, 300))):
        lv = levels if col.dtype != np.int64 else (3, 1, 0, 2)
        want = pd.Index(list(lv)).get_indexer(col.to_numpy()).astype(np.int64)
        assert np.array_equal(_codes(col, lv, "x", "release"), want)
    schema = Schema((Attribute("n", "numeric", (0, 10)), Attribute("o", "ordinal", (1, 2, 3)),
                     Attribute("c", "categorical", levels), Attribute("y", "categorical", (0, 1))),
                    class_attribute="y")
    table = Table(pd.DataFrame({"n": rng.uniform(0, 10, 300), "o": rng.integers(1, 4, 300),
                                "c": pd.Categorical(values, categories=levels),
                                "y": rng.integers(0, 2, 300)}), schema)
    (enc,) = encode_table(table)
    x = enc.design("onehot")
    train, test = np.arange(0, 300, 3), np.setdiff1d(np.arange(300), np.arange(0, 300, 3))
    assert np.array_equal(x[test], enc.take(test).design("onehot"))
    for clf in ("decision_tree", "mlp"):
        a = _fit_predict(clf, enc.take(train), enc.take(test), categorical="onehot", seed=3)
        b = _fit_predict(clf, enc.take(train), enc.take(test), categorical="onehot", seed=3,
                         designs=(x[train], x[test]))
        assert np.array_equal(a, b)
