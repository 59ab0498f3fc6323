"""Marginal errors of a released table (AIM's workload error, 1- and 2-way TVD)."""

import itertools

import numpy as np
import pandas as pd
import pytest

from privpub.errors import PrivpubError
from privpub.metrics.marginals import marginal_errors, marginal_l1_3way, tvd_1way, tvd_2way
from privpub.registry import get_metric
from privpub.types import Attribute, Schema, Table

SCHEMA = Schema((Attribute("a", "ordinal", (0, 1)), Attribute("b", "ordinal", (0, 1)),
                 Attribute("c", "categorical", ("x", "y", "z")),
                 Attribute("age", "numeric", (0, 63))))


def _table(rows):
    return Table(pd.DataFrame(rows, columns=["a", "b", "c", "age"]), SCHEMA)


def test_identical_tables_and_duplicated_rows_have_no_error():
    t = _table([(0, 1, "x", 5), (1, 1, "y", 40), (1, 0, "z", 63)])
    twice = _table([(0, 1, "x", 5), (1, 1, "y", 40), (1, 0, "z", 63)] * 2)
    for f in (marginal_l1_3way, tvd_1way, tvd_2way):
        assert f(t, t) == 0.0
        assert f(t, twice) == pytest.approx(0.0)   # marginals are normalised


def test_values_by_hand():
    truth = _table([(0, 0, "x", 0), (1, 1, "x", 0)])
    release = _table([(0, 0, "x", 0), (0, 0, "x", 0)])
    # 1-way: a and b each TVD 0.5, c and age 0 -> mean 0.25
    assert tvd_1way(truth, release) == pytest.approx(0.25)
    # 2-way pairs: (a,b) 0.5, (a,c) 0.5, (a,age) 0.5, (b,c) 0.5, (b,age) 0.5, (c,age) 0
    assert tvd_2way(truth, release) == pytest.approx(2.5 / 6)
    # 3-way L1 (not halved): every triple holding a or b has L1 1.0; (c, age) has none
    triples = list(itertools.combinations("abcd", 3))
    assert marginal_l1_3way(truth, release) == pytest.approx(1.0 * len(triples) / len(triples))
    np.testing.assert_allclose(marginal_errors(truth, release, 1), [1, 1, 0, 0])


def test_numeric_values_are_binned_by_the_public_domain():
    truth = _table([(0, 0, "x", 0)])
    same_bin = _table([(0, 0, "x", 1)])   # 64 values in 32 bins: 0 and 1 share a bin
    other_bin = _table([(0, 0, "x", 2)])
    assert tvd_1way(truth, same_bin) == 0.0
    assert tvd_1way(truth, other_bin) == pytest.approx(0.25)


def test_registered_lower_is_better():
    for name in ("marginal_l1_3way", "tvd_1way", "tvd_2way"):
        assert get_metric(name).higher_is_better is False


def test_bad_input():
    t = _table([(0, 0, "x", 0)])
    with pytest.raises(PrivpubError, match="release must be a Table"):
        tvd_1way(t, "not a table")
    with pytest.raises(PrivpubError, match="no rows"):
        tvd_1way(t, _table([]))
    two = Table(pd.DataFrame({"a": [0], "b": [1]}), Schema(SCHEMA.attributes[:2]))
    with pytest.raises(PrivpubError, match="3-way marginal needs 3 attributes"):
        marginal_l1_3way(two, two)
