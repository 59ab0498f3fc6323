"""Tests of Mondrian (LeFevre et al. 2006), qardaji2012's k-anonymity baseline
(baselines/mondrian.py)."""

from __future__ import annotations

import inspect
import itertools
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privpub.baselines.mondrian as mondrian_module
from privpub.baselines.mondrian import (
    _encode,
    mondrian,
    mondrian_partition,
    resolve_quasi_identifiers,
    verify_k_anonymous_table,
)
from privpub.errors import DataError, PrivpubError
from privpub.registry import K_ANONYMITY, get_mechanism, get_metric
from privpub.types import Attribute, Kind, Release, Schema, Table
from privpub.verify import verify_release

_DIR = os.environ.get("PRIVPUB_DATA_DIR", "")
needs_data = pytest.mark.skipif(
    not (_DIR and Path(_DIR).is_dir()), reason="real data unavailable: PRIVPUB_DATA_DIR unset"
)


# --------------------------------------------------------------------------- helpers
def table_1d(values, labels=None, kind="numeric", domain=None):
    n = len(values)
    labels = labels if labels is not None else ["a"] * n
    dom = (
        domain
        if domain is not None
        else ((min(values), max(values)) if kind == "numeric" else tuple(sorted(set(values))))
    )
    schema = Schema(
        (Attribute("x", kind, dom), Attribute("y", "categorical", ("a", "b"))), class_attribute="y"
    )
    return Table(pd.DataFrame({"x": values, "y": labels}), schema)


def random_table(rng, n, d):
    """A mixed table: numeric (integer with ties, or float), ordinal and categorical QIs."""
    attrs, cols = [], {}
    for j in range(d):
        kind = rng.choice(["int", "float", "ordinal", "categorical"])
        name = f"q{j}"
        if kind == "int":
            v = rng.integers(0, int(rng.integers(1, 12)), n)
            attrs.append(Attribute(name, "numeric", (0, 20)))
        elif kind == "float":
            v = np.round(rng.normal(size=n), 1)
            attrs.append(Attribute(name, "numeric", (-10.0, 10.0)))
        else:
            dom = tuple(f"{kind[0]}{i}" for i in range(int(rng.integers(2, 7))))
            v = np.asarray(dom, dtype=object)[rng.integers(0, len(dom), n)]
            attrs.append(Attribute(name, kind, dom))
        cols[name] = v
    cols["label"] = rng.choice(["yes", "no"], n)
    attrs.append(Attribute("label", "categorical", ("no", "yes")))
    return Table(pd.DataFrame(cols), Schema(tuple(attrs), class_attribute="label"))


def class_sets(labels):
    return sorted(tuple(np.flatnonzero(labels == c)) for c in np.unique(labels))


def qi_codes(table):
    qis = _encode(table, resolve_quasi_identifiers(table.schema))
    return qis, np.column_stack([q.codes for q in qis])


def reference_strict(codes, qis, k):
    """Plain recursive strict Mondrian with the documented rules, for cross-checking."""
    out = []

    def width(rows):
        lo, hi = codes[rows].min(axis=0), codes[rows].max(axis=0)
        return [float(q.width(lo[j : j + 1], hi[j : j + 1])[0]) for j, q in enumerate(qis)]

    def anonymize(rows):
        m = len(rows)
        if m >= 2 * k:
            w = width(rows)
            for dim in sorted(range(len(qis)), key=lambda j: -w[j]):  # stable: ties by index
                if w[dim] <= 0:
                    break
                v = codes[rows, dim]
                med = np.sort(v)[m // 2]
                below, upto = int((v < med).sum()), int((v <= med).sum())
                if upto <= m - k and (below < k or 2 * upto - m <= m - 2 * below):
                    left = v <= med
                elif below >= k:
                    left = v < med
                else:
                    continue
                anonymize(rows[left])
                anonymize(rows[~left])
                return
        out.append(tuple(sorted(rows.tolist())))

    anonymize(np.arange(len(codes)))
    return sorted(out)


def assert_k_anonymous(release: Table, k: int, qis=None):
    qis = qis or resolve_quasi_identifiers(release.schema)
    counts = release.data.groupby(qis, observed=True, dropna=False).size()
    assert counts.min() >= k, counts.min()
    verify_k_anonymous_table(None, release, {"k": k, "quasi_identifiers": qis})


# --------------------------------------------------------------------------- hand-checked
def test_hand_checked_strict_split_at_median_boundaries():
    """1..8, k=2: the median 5 gives '< 5' (4|4, balanced) over '<= 5' (5|3); then 1..4 is
    cut at '< 3' (2|2) since '<= 3' leaves 1 row; classes {1,2} {3,4} {5,6} {7,8}."""
    t = table_1d([8, 3, 1, 6, 2, 7, 4, 5])
    out = mondrian(t, k=2, rng=np.random.default_rng(0))
    assert out.value.data["x"].tolist() == [7.5, 3.5, 1.5, 5.5, 1.5, 7.5, 3.5, 5.5]
    assert out.info == {"ncp": pytest.approx(1 / 7), "classes": 4}


def test_hand_checked_strict_and_relaxed_differ_on_ties():
    """0,0,0,0,0,1 with k=2. Strict: the median is 0; '<= 0' leaves 1 row on the right and
    '< 0' nothing on the left, so there is no allowable cut: one class, NCP 1. Relaxed: the
    sorted rows are halved, three 0s | two 0s and the 1: two classes, NCP (3*0 + 3*1)/6."""
    t = table_1d([0, 0, 1, 0, 0, 0])
    strict = mondrian(t, k=2, mode="strict", rng=np.random.default_rng(0))
    assert strict.info == {"ncp": 1.0, "classes": 1}
    assert strict.value.data["x"].tolist() == [0.5] * 6
    relaxed = mondrian(t, k=2, mode="relaxed", rng=np.random.default_rng(0))
    assert relaxed.info == {"ncp": 0.5, "classes": 2}
    x = relaxed.value.data["x"].to_numpy()
    assert x[2] == 0.5 and sorted(x.tolist()) == [0.0, 0.0, 0.0, 0.5, 0.5, 0.5]
    # which two 0s join the 1 is decided by rng (the tie is split "arbitrarily")
    partners = {
        tuple(np.flatnonzero(mondrian(t, k=2, mode="relaxed", rng=s).value.data["x"] == 0.5))
        for s in range(40)
    }
    assert len(partners) > 3


def test_hand_checked_mixed_attributes_and_recoding():
    """age (numeric), colour (categorical, domain order r < g < b), size (ordinal), k=3. All
    three span their whole range (normalised width 1): the tie goes to age, the first. Its
    median is 40; '<= 40' leaves 2 rows on the right, so the cut is '< 40': 3 | 3 rows."""
    schema = Schema(
        (
            Attribute("age", "numeric", (0, 100)),
            Attribute("colour", "categorical", ("r", "g", "b")),
            Attribute("size", "ordinal", ("S", "M", "L", "XL")),
            Attribute("y", "categorical", ("no", "yes")),
        ),
        class_attribute="y",
    )
    df = pd.DataFrame(
        {
            "age": [20, 30, 25, 40, 50, 45],
            "colour": ["r", "g", "g", "b", "b", "g"],
            "size": ["S", "S", "L", "XL", "M", "XL"],
            "y": ["no", "yes", "no", "yes", "yes", "no"],
        }
    )
    t = Table(df.copy(), schema)
    out = mondrian(t, k=3, rng=np.random.default_rng(0))
    rel = out.value.data
    assert out.info["classes"] == 2
    assert rel["age"].tolist() == [25.0, 25.0, 25.0, 45.0, 45.0, 45.0]  # range midpoints
    # colour: the class mode (g in {r, g, g}; b in {b, b, g})
    assert rel["colour"].tolist() == ["g", "g", "g", "b", "b", "b"]
    # size: middle of the interval in domain order: {S, S, L} -> S..L -> M; {XL, M, XL} -> M..XL
    # -> (1 + 3) // 2 = L
    assert rel["size"].tolist() == ["M", "M", "M", "L", "L", "L"]
    assert rel["y"].tolist() == df["y"].tolist()  # class labels untouched
    # NCP per class: age 10/30, colour 2/3 (r..g) resp. 2/3 (g..b), size 3/4 resp. 3/4
    assert out.info["ncp"] == pytest.approx((10 / 30 + 2 / 3 + 3 / 4) / 3)
    pd.testing.assert_frame_equal(t.data, df)  # input untouched


def test_categorical_and_object_columns_keep_their_dtype():
    rng = np.random.default_rng(1)
    t = random_table(rng, 60, 4)
    cat = Table(t.data.copy(), t.schema)
    for a in t.schema.attributes:
        if a.kind != "numeric":
            cat.data[a.name] = pd.Categorical(
                cat.data[a.name], categories=list(a.domain), ordered=a.kind == "ordinal"
            )
    for table in (t, cat):
        out = mondrian(table, k=5, rng=np.random.default_rng(0)).value
        for a in table.schema.attributes:
            if a.kind != "numeric":
                assert out.data[a.name].dtype == table.data[a.name].dtype
        assert list(out.data.columns) == list(table.data.columns)
        assert out.schema is table.schema


# --------------------------------------------------------------------------- random tables
@pytest.mark.parametrize("seed", range(30))
def test_random_tables_are_k_anonymous_and_strict_matches_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 150))
    t = random_table(rng, n, int(rng.integers(1, 5)))
    k = int(rng.integers(2, n + 1))
    qis, codes = qi_codes(t)
    for mode in ("strict", "relaxed"):
        out = mondrian(t, k=k, mode=mode, rng=np.random.default_rng(seed))
        assert isinstance(out, Release) and out.value.n_rows == n
        assert_k_anonymous(out.value, k)
        assert 0.0 <= out.info["ncp"] <= 1.0
        part = mondrian_partition(
            qis, n, k=k, strict=mode == "strict", rng=np.random.default_rng(seed)
        )
        assert part.n_classes == out.info["classes"] and part.sizes.sum() == n
        assert np.all(part.sizes >= k) and np.all(np.bincount(part.labels) == part.sizes)
        # the ranges are the classes' true min / max codes
        for c in range(part.n_classes):
            members = codes[part.labels == c]
            np.testing.assert_array_equal(members.min(axis=0), part.lo[c])
            np.testing.assert_array_equal(members.max(axis=0), part.hi[c])
        if mode == "strict":
            assert class_sets(part.labels) == reference_strict(codes, qis, k)
            # regions do not overlap: any two classes are separated in some dimension
            for a, b in itertools.combinations(range(part.n_classes), 2):
                assert np.any((part.hi[a] < part.lo[b]) | (part.hi[b] < part.lo[a]))
        else:
            # relaxed stops only below 2k rows or when all QIs are equal in the class
            constant = np.all(part.lo == part.hi, axis=1)
            assert np.all((part.sizes < 2 * k) | constant)


@pytest.mark.parametrize("seed", range(10))
def test_strict_classes_have_no_allowable_cut_left(seed):
    """Brute force over every value boundary of every dimension of every final class with
    >= 2k rows: none leaves >= k rows on both sides (so 'next to the median' loses no cut)."""
    rng = np.random.default_rng(100 + seed)
    t = random_table(rng, 300, 3)
    k = int(rng.integers(2, 25))
    qis, codes = qi_codes(t)
    part = mondrian_partition(qis, t.n_rows, k=k, strict=True, rng=rng)
    for c in range(part.n_classes):
        members = codes[part.labels == c]
        if len(members) < 2 * k:
            continue
        for j in range(codes.shape[1]):
            for v in np.unique(members[:, j])[:-1]:
                left = int((members[:, j] <= v).sum())
                assert left < k or len(members) - left < k


def test_released_values_represent_their_class():
    rng = np.random.default_rng(7)
    t = random_table(rng, 200, 4)
    qis, codes = qi_codes(t)
    part = mondrian_partition(qis, t.n_rows, k=6, strict=True, rng=np.random.default_rng(0))
    rel = mondrian(t, k=6, rng=np.random.default_rng(0)).value.data
    for q in qis:
        orig = t.data[q.name]
        for c in range(part.n_classes):
            rows = part.labels == c
            if q.numeric:
                lo, hi = orig[rows].min(), orig[rows].max()
                assert np.allclose(rel[q.name][rows], (lo + hi) / 2)
            else:
                codes_rel = pd.Index(q.levels).get_indexer(rel[q.name][rows])
                assert np.unique(codes_rel).size == 1
                if q.ordinal:
                    assert (
                        codes_rel[0] == (part.lo[c, qis.index(q)] + part.hi[c, qis.index(q)]) // 2
                    )
                else:  # the most frequent value of the class, ties to the first in the domain
                    counts = pd.Index(q.levels).get_indexer(orig[rows]).tolist()
                    best = max(set(counts), key=lambda v: (counts.count(v), -v))
                    assert codes_rel[0] == best


def test_strict_is_deterministic_relaxed_is_seeded():
    t = random_table(np.random.default_rng(3), 120, 3)
    a = mondrian(t, k=4, rng=np.random.default_rng(1)).value.data
    b = mondrian(t, k=4, rng=np.random.default_rng(2)).value.data
    pd.testing.assert_frame_equal(a, b)
    r1 = mondrian(t, k=4, mode="relaxed", rng=5).value.data
    r2 = mondrian(t, k=4, mode="relaxed", rng=np.random.default_rng(5)).value.data
    pd.testing.assert_frame_equal(r1, r2)


def test_quasi_identifier_subset_leaves_other_attributes_unchanged():
    rng = np.random.default_rng(4)
    t = random_table(rng, 100, 4)
    out = mondrian(t, k=7, quasi_identifiers=["q0", "q2"], rng=rng).value
    assert_k_anonymous(out, 7, ["q0", "q2"])
    for name in ("q1", "q3", "label"):
        pd.testing.assert_series_equal(out.data[name], t.data[name])
    # a single name is accepted as a one-element list
    one = mondrian(t, k=7, quasi_identifiers="q1", rng=rng).value
    assert_k_anonymous(one, 7, ["q1"])


def test_k_equal_n_gives_one_class_and_k_above_half_no_split():
    t = table_1d(list(range(10)))
    for k in (6, 10):
        out = mondrian(t, k=k, rng=0)
        assert out.info["classes"] == 1 and out.info["ncp"] == 1.0


def test_large_domains_and_wide_numeric_ranges():
    """Codes far apart (a 5,000-value domain, numeric values spread over 1e9) take the
    sorting paths of the median and the mode; the result matches the reference."""
    rng = np.random.default_rng(11)
    dom = tuple(f"v{i}" for i in range(5000))
    n = 90
    df = pd.DataFrame(
        {
            "c": np.asarray(dom, dtype=object)[rng.integers(0, 5000, n)],
            "x": rng.integers(0, 10**9, n).astype(float),
            "y": rng.choice(["a", "b"], n),
        }
    )
    schema = Schema(
        (
            Attribute("c", "categorical", dom),
            Attribute("x", "numeric", (0, 1e9)),
            Attribute("y", "categorical", ("a", "b")),
        ),
        class_attribute="y",
    )
    t = Table(df, schema)
    qis, codes = qi_codes(t)
    for k in (2, 3, 7):
        part = mondrian_partition(qis, n, k=k, strict=True, rng=rng)
        assert class_sets(part.labels) == reference_strict(codes, qis, k)
        assert_k_anonymous(mondrian(t, k=k, mode="relaxed", rng=rng).value, k)


def test_constant_table_has_zero_ncp():
    t = table_1d([3] * 12, kind="numeric", domain=(0, 10))
    for mode in ("strict", "relaxed"):
        out = mondrian(t, k=2, mode=mode, rng=0)
        assert out.info == {"ncp": 0.0, "classes": 1}


# --------------------------------------------------------------------------- verifier
def test_verifier_catches_a_violation_and_is_registered():
    t = random_table(np.random.default_rng(5), 80, 3)
    rel = mondrian(t, k=5, rng=0).value
    assert verify_release(K_ANONYMITY, t, rel, {"k": 5}) is True
    broken = Table(rel.data.copy(), rel.schema)
    q = "q0"
    if t.schema[q].kind == "numeric":
        broken.data.loc[0, q] = 1e6
    else:
        broken.data[q] = broken.data[q].astype(object)
        broken.data.loc[0, q] = "unique-value"
    with pytest.raises(PrivpubError, match="not 5-anonymous"):
        verify_release(K_ANONYMITY, t, broken, {"k": 5})
    with pytest.raises(PrivpubError, match="not 6-anonymous"):  # classes of 5 rows exist
        verify_release(
            K_ANONYMITY,
            t,
            mondrian(t, k=5, mode="relaxed", rng=0).value,
            {"k": 6, "quasi_identifiers": None},
        )
    with pytest.raises(PrivpubError, match="'k'"):
        verify_k_anonymous_table(t, rel, {})


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("k", [1, 0, -3, 2.5, "2", None, True])
def test_bad_k(k):
    with pytest.raises(PrivpubError, match="k"):
        mondrian(table_1d([1, 2, 3, 4]), k=k, rng=0)


def test_bad_arguments():
    t = table_1d([1, 2, 3, 4])
    with pytest.raises(PrivpubError, match="exceeds the number of rows"):
        mondrian(t, k=5, rng=0)
    with pytest.raises(PrivpubError, match="mode"):
        mondrian(t, k=2, mode="loose", rng=0)
    with pytest.raises(PrivpubError, match="not attributes"):
        mondrian(t, k=2, quasi_identifiers=["x", "zip"], rng=0)
    with pytest.raises(PrivpubError, match="class attribute"):
        mondrian(t, k=2, quasi_identifiers=["y"], rng=0)
    with pytest.raises(PrivpubError, match="empty"):
        mondrian(t, k=2, quasi_identifiers=[], rng=0)
    with pytest.raises(PrivpubError, match="repeats"):
        mondrian(t, k=2, quasi_identifiers=["x", "x"], rng=0)
    with pytest.raises(DataError, match="Table"):
        mondrian(t.data, k=2, rng=0)
    with pytest.raises(PrivpubError, match="rng"):
        mondrian(t, k=2, rng="seed")


def test_bad_values():
    with pytest.raises(DataError, match="missing or infinite"):
        mondrian(table_1d([1.0, np.nan, 3.0, 4.0], domain=(0, 5)), k=2, rng=0)
    with pytest.raises(DataError, match="not numeric"):
        mondrian(table_1d(["1", "a", "3", "4"], domain=(0, 5)), k=2, rng=0)
    with pytest.raises(DataError, match="outside its domain"):
        mondrian(table_1d(["a", "b", "z", "a"], kind="categorical", domain=("a", "b")), k=2, rng=0)


# --------------------------------------------------------------------------- registry / config
@pytest.mark.parametrize(
    "name,func,privacy,params",
    [
        (
            "mondrian",
            mondrian,
            K_ANONYMITY,
            {"k": inspect.Parameter.empty, "mode": "strict", "quasi_identifiers": None},
        ),
    ],
)
def test_registry(name, func, privacy, params):
    info = get_mechanism(name)
    assert info.func is func and info.privacy == privacy
    assert (info.input_kind, info.output_kind) == (Kind.TABLE, Kind.TABLE)
    assert (info.paper, info.role, info.caveat) == ("qardaji2012", "baseline", None)
    assert info.parameters == params
    assert mondrian_module.__all__


# --------------------------------------------------------------------------- Adult
@pytest.fixture(scope="module")
def adult():
    from privpub.data import load_dataset

    return load_dataset("adult")


@needs_data
@pytest.mark.data
def test_adult_k_anonymous_and_ncp_grows_with_k(adult):
    info = {}
    qis = resolve_quasi_identifiers(adult.schema)
    for mode in ("strict", "relaxed"):
        for k in (2, 10, 50):
            out = mondrian(adult, k=k, mode=mode, rng=np.random.default_rng(k))
            counts = out.value.data.groupby(qis, observed=True, sort=False).size()
            assert counts.min() >= k
            assert out.value.n_rows == adult.n_rows and out.value.schema is adult.schema
            assert out.info["classes"] <= adult.n_rows // k
            info[mode, k] = out.info
            assert out.value.data["income"].equals(adult.data["income"])
        ncp = [info[mode, k]["ncp"] for k in (2, 10, 50)]
        assert 0 < ncp[0] < ncp[1] < ncp[2] < 1
    verify_release(K_ANONYMITY, adult, out.value, {"k": 50})
    # relaxed halves every partition: 30,162 rows at k = 10 end in 2^11 classes of 14-15
    assert info["relaxed", 10]["classes"] == 2048


@needs_data
@pytest.mark.data
def test_adult_release_feeds_the_classification_metrics(adult):
    """The release is scored like any table; the majority-vote reference (ZeroR under
    5-fold CV) gives Adult's majority rate, qardaji2012's "0.75"."""
    rate = adult.data["income"].value_counts(normalize=True).max()
    assert rate == pytest.approx(0.7511, abs=1e-4)
    rel = mondrian(adult, k=50, rng=0).value
    acc = get_metric("accuracy_cv_nb").func(adult, rel, rng=np.random.default_rng(0))
    assert rate - 0.05 < acc < 0.9
    vote = get_metric("accuracy_cv_majority").func(adult, adult, rng=np.random.default_rng(0))
    assert vote == pytest.approx(rate, abs=1e-12)
