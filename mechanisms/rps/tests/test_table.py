"""Tests of rps_table (qardaji2012 Sec 3.2, Sec 4: synthetic tables under record-DP)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privpub.data import load_dataset
from privpub.errors import DataError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.rps.table import rps_table
from privpub.metrics.distributions import emd_p2
from privpub.registry import RECORD_DP, get_mechanism
from privpub.testing import empirical_privacy_check
from privpub.types import Attribute, Kind, Release, Schema, Table


def mixed_table(n=300, seed=0):
    """Integer, float, ordinal, categorical attributes and a binary class."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 70, n)
    score = np.round(rng.uniform(-2.0, 7.5, n), 2)
    level = rng.choice(["low", "mid", "high"], n)
    colour = rng.choice(["red", "green", "blue", "black"], n)
    label = np.where((age > 40) ^ (rng.random(n) < 0.1), "yes", "no")
    schema = Schema((
        Attribute("age", "numeric", (18, 70)),
        Attribute("score", "numeric", (-2.0, 7.5)),
        Attribute("level", "ordinal", ("low", "mid", "high")),
        Attribute("colour", "categorical", ("red", "green", "blue", "black")),
        Attribute("label", "categorical", ("no", "yes")),
    ), class_attribute="label")
    df = pd.DataFrame({
        "age": age, "score": score,
        "level": pd.Categorical(level, categories=["low", "mid", "high"], ordered=True),
        "colour": colour,  # plain object column
        "label": pd.Categorical(label, categories=["no", "yes"]),
    })
    return Table(df, schema)


def tiny_table(values):
    schema = Schema((Attribute("x", "numeric", (0, 3)),))
    return Table(pd.DataFrame({"x": np.asarray(values, dtype=np.int64)}), schema)


# --------------------------------------------------------------------------- output
@pytest.mark.parametrize("kw", [
    {},
    {"quality": "class", "attributes": "random", "stop_count": 5, "depth": 20},
    {"partition": "midpoint", "summary": "midpoint"},
    {"summary": "lower", "stop_count": 0, "split": 0.3},
])
def test_output_has_the_input_schema(kw):
    table = mixed_table(n=120)
    release = rps_table(table, epsilon=2.0, rng=np.random.default_rng(1), **kw)
    assert isinstance(release, Release)
    out = release.value
    assert isinstance(out, Table) and out.schema is table.schema
    assert list(out.data.columns) == table.schema.names
    assert out.data["age"].dtype == table.data["age"].dtype == np.int64
    assert out.data["score"].dtype == np.float64
    for name in ("level", "label"):
        assert out.data[name].dtype == table.data[name].dtype  # same categories and order
    assert set(out.data["colour"]) <= set(table.schema["colour"].domain)
    assert out.data["age"].between(18, 70).all()
    assert out.data["score"].between(-2.0, 7.5).all()
    assert not out.data.isna().any().any()
    info = release.info
    assert info["rows"] == out.n_rows
    assert info["leaves"] >= 1 and 0.0 <= release.diagnostics["purity"] <= 1.0
    assert "purity" not in info  # computed from the true labels: a diagnostic
    assert all(isinstance(v, (int, float)) for v in info.values())


def test_gaussian_mixture_keeps_its_class_column_and_reports_purity():
    table = load_dataset("gaussian_mixture", rng=0, n=3000)
    release = rps_table(table, epsilon=1.0, depth=10, stop_count=5, rng=np.random.default_rng(0))
    out = release.value
    assert out.schema is table.schema and out.schema.class_attribute == "component"
    assert set(out.data["component"].unique()) == {0, 1, 2}
    assert out.data["component"].dtype == table.data["component"].dtype
    # three well separated Gaussians: leaves are nearly pure (Fig 2 reports 0.9+)
    assert release.diagnostics["purity"] > 0.9
    # no class attribute: no purity
    plain = load_dataset("gaussian_1d", rng=0, n=500)
    assert "purity" not in rps_table(plain, epsilon=1.0, rng=np.random.default_rng(0)).diagnostics


def test_purity_is_the_majority_share_of_original_rows():
    table = mixed_table(n=400)
    labels = table.data["label"].to_numpy()
    overall = max(np.mean(labels == "yes"), np.mean(labels == "no"))
    release = rps_table(table, epsilon=1.0, depth=0, rng=np.random.default_rng(0))
    assert release.info["leaves"] == 1
    assert release.diagnostics["purity"] == pytest.approx(overall)
    # the class depends on age > 40 (10% noise): the class-aware partition finds it
    deep = rps_table(table, epsilon=50.0, depth=6, quality="class",
                     rng=np.random.default_rng(0)).diagnostics["purity"]
    assert deep > 0.85 > overall


def test_noisy_majority_vote_labels_each_leaf():
    # one attribute, classes split at x = 2: every released row with x < 2 is "a"
    n = 400
    x = np.repeat([0, 1, 2, 3], n // 4)
    label = np.where(x < 2, "a", "b")
    schema = Schema((Attribute("x", "numeric", (0, 3)),
                     Attribute("c", "categorical", ("a", "b"))), class_attribute="c")
    table = Table(pd.DataFrame({"x": x, "c": label}), schema)
    out = rps_table(table, epsilon=20.0, depth=2, rng=np.random.default_rng(0)).value.data
    assert (out.loc[out["x"] < 2, "c"] == "a").all() and (out.loc[out["x"] >= 2, "c"] == "b").all()
    assert abs(len(out) - n) < 10


def test_categorical_order_is_random_but_seeded():
    table = mixed_table(n=100)
    a = rps_table(table, epsilon=1.0, depth=4, rng=np.random.default_rng(7)).value.data
    b = rps_table(table, epsilon=1.0, depth=4, rng=np.random.default_rng(7)).value.data
    pd.testing.assert_frame_equal(a, b)
    c = rps_table(table, epsilon=1.0, depth=4, rng=np.random.default_rng(8)).value.data
    assert not a.equals(c)


def test_utility_on_gaussian_1d():
    """Sec 4.1 / Fig 1: at eps = 1 with a noisy stop at 5 the EMD is small."""
    table = load_dataset("gaussian_1d", rng=0)
    emds = [emd_p2(table, rps_table(table, epsilon=1.0, depth=10, stop_count=5,
                                     rng=np.random.default_rng(s)).value) for s in range(3)]
    assert np.mean(emds) < 2.0


# --------------------------------------------------------------------------- privacy
@pytest.mark.parametrize("seed", range(6))
def test_ledger_paths_never_exceed_epsilon(seed):
    rng = np.random.default_rng(seed)
    eps = float(rng.choice([0.1, 1.0, 4.0]))
    ledger = PrivacyLedger(eps)
    stop_count = [None, 0, 1, 3, 5, 10][seed]
    kw = dict(depth=int(rng.integers(0, 8 if stop_count is None else 25)), stop_count=stop_count,
              attributes=str(rng.choice(["all", "random"])),
              quality=str(rng.choice(["count", "class"])),
              partition=str(rng.choice(["median", "midpoint"])),
              split=float(rng.choice([0.25, 0.5, 0.75])))
    rps_table(mixed_table(n=150, seed=seed), epsilon=eps, rng=rng, ledger=ledger, **kw)
    assert 0 < ledger.spent <= eps * (1 + 1e-9)
    branches: dict[str, float] = {}
    for e in ledger.entries:
        if e.primitive != "parallel":
            branches[e.path] = branches.get(e.path, 0.0) + e.epsilon
    assert max(branches.values()) <= eps * (1 + 1e-9)
    assert ledger.spent == pytest.approx(max(branches.values()))
    assert len(ledger.to_json()) < 60_000  # compact record: stored with every result row
    labels = {e.label.split(" (x")[0] for e in ledger.entries}
    assert any("leaf summary" in lb for lb in labels)


def test_empirical_neighbour_test_on_a_tiny_table():
    """D = {0, 1, 2, 3} vs D' = {0, 1, 2} (one record removed), eps = 1, depth 2, with a
    noisy-count stop: events on the released multiset of values."""
    eps = 1.0
    d, d_prime = tiny_table([0, 1, 2, 3]), tiny_table([0, 1, 2])

    def sampler(table):
        def sample(rng):
            out = rps_table(table, epsilon=eps, depth=2, stop_count=1, summary="lower",
                            rng=rng).value.data["x"].to_numpy()
            return np.bincount(out, minlength=4)
        return sample

    events = {
        "rows >= 4": lambda c: c.sum() >= 4,
        "rows >= 6": lambda c: c.sum() >= 6,
        "some row >= 2": lambda c: c[2:].sum() >= 1,
        "two rows >= 2": lambda c: c[2:].sum() >= 2,
        "a 3": lambda c: c[3] >= 1,
        "no 3, a 2": lambda c: c[3] == 0 and c[2] >= 1,
    }
    check = empirical_privacy_check(sampler(d), sampler(d_prime), events=events, epsilon=eps,
                                    n_trials=600, rng=np.random.default_rng(0),
                                    raise_on_violation=False)
    check.assert_passed()
    # the test has power: the data refute much smaller epsilons (D and D' differ visibly)
    assert check.epsilon_lower_bound > 0.05


# --------------------------------------------------------------------------- validation
def test_bad_arguments_raise_clear_errors():
    table = mixed_table(n=50)
    rng = np.random.default_rng(0)
    bad = [
        ({"epsilon": 0}, "epsilon"), ({"epsilon": -1.0}, "epsilon"),
        ({"depth": -1}, "depth"), ({"stop_count": -1}, "stop_count"),
        ({"stop_count": "5"}, "stop_count"), ({"partition": "mean"}, "partition"),
        ({"attributes": "some"}, "attributes"), ({"quality": "gini"}, "quality"),
        ({"summary": "mean"}, "summary"), ({"split": 0.0}, "split"), ({"split": 1.2}, "split"),
        ({"granularity": 0}, "granularity"), ({"stop_share": 1.0}, "stop_share"),
        ({"split": 1.0}, "split = 1"),
    ]
    for kw, match in bad:
        args = {"epsilon": 1.0, **kw}
        with pytest.raises(PrivpubError, match=match):
            rps_table(table, rng=rng, **args)
    # split = 1 is fine when nothing but the leaves spends
    rps_table(table, epsilon=1.0, split=1.0, partition="midpoint", rng=rng)
    plain = tiny_table([0, 1])
    with pytest.raises(PrivpubError, match="class attribute"):
        rps_table(plain, epsilon=1.0, quality="class", rng=rng)
    mixture = load_dataset("gaussian_mixture", rng=0, n=60)
    with pytest.raises(PrivpubError, match="binary"):
        rps_table(mixture, epsilon=1.0, quality="class", rng=rng)
    with pytest.raises(DataError, match="outside its domain"):
        rps_table(tiny_table([0, 5]), epsilon=1.0, rng=rng)
    with pytest.raises(DataError):
        rps_table(pd.DataFrame({"x": [1]}), epsilon=1.0, rng=rng)
    schema = Schema((Attribute("c", "categorical", ()),))
    with pytest.raises(PrivpubError, match="empty domain"):
        rps_table(Table(pd.DataFrame({"c": ["u"]}), schema), epsilon=1.0, rng=rng)


def test_empty_table_is_allowed():
    out = rps_table(tiny_table([]), epsilon=1.0, depth=3, rng=np.random.default_rng(0))
    assert out.value.schema.names == ["x"]


def test_registration():
    info = get_mechanism("rps_table")
    assert info.privacy == RECORD_DP and info.paper == "qardaji2012"
    assert info.input_kind == Kind.TABLE and info.output_kind == Kind.TABLE
    assert info.caveat is None
    assert info.parameters["depth"] == 10 and info.parameters["stop_count"] is None


@pytest.mark.data
def test_adult_depth_50(tmp_path):
    import os

    data_dir = os.environ.get("PRIVPUB_DATA_DIR")
    if not data_dir or not Path(data_dir, "adult").exists():
        pytest.skip("needs PRIVPUB_DATA_DIR with adult/ (see README, Data)")
    table = load_dataset("adult", data_dir=data_dir, split="test")  # 15,060 rows: faster
    ledger = PrivacyLedger(0.2)
    release = rps_table(table, epsilon=0.2, depth=50, stop_count=5, attributes="random",
                        quality="class", rng=np.random.default_rng(0), ledger=ledger)
    out = release.value
    assert out.schema is table.schema
    # noisy counts of sparse leaves add rows at small epsilon (Sec 4.2), within a factor 2
    assert 0.5 * table.n_rows < out.n_rows < 2 * table.n_rows
    assert ledger.spent <= 0.2 * (1 + 1e-9)
    json.loads(ledger.to_json())
    # the class balance is roughly kept (25% >50K in the original)
    share = np.mean(out.data["income"].astype(str) == ">50K")
    assert 0.05 < share < 0.45
