"""MarginalDomain: public discretisation of a table for marginal-based synthesizers."""

import numpy as np
import pandas as pd
import pytest

from privpub.algorithms.encoding import MarginalDomain
from privpub.errors import PrivpubError
from privpub.types import Attribute, Schema, Table


def _table():
    schema = Schema((Attribute("age", "numeric", (0, 99)),
                     Attribute("score", "numeric", (0.0, 1.0)),
                     Attribute("small", "numeric", (1, 4)),
                     Attribute("y", "categorical", ("a", "b", "c"))), class_attribute="y")
    df = pd.DataFrame({"age": [0, 5, 50, 99], "score": [0.0, 0.26, 0.5, 1.0],
                       "small": [1, 2, 3, 4], "y": ["a", "c", "b", "a"]})
    return Table(df, schema)


def test_sizes_and_codes():
    t = _table()
    d = MarginalDomain.from_table(t, n_bins=10)
    assert d.sizes == (10, 10, 4, 3)       # 'small' has 4 values: one bin each
    x = d.encode(t)
    assert x[:, 0].tolist() == [0, 0, 5, 9]
    assert x[:, 1].tolist() == [0, 2, 5, 9]
    assert x[:, 2].tolist() == [0, 1, 2, 3]
    assert x[:, 3].tolist() == [0, 2, 1, 0]


def test_decode_draws_within_the_bin():
    t = _table()
    d = MarginalDomain.from_table(t, n_bins=10)
    rng = np.random.default_rng(0)
    codes = np.tile(d.encode(t), (200, 1))
    back = d.decode(codes, rng)
    np.testing.assert_array_equal(d.encode(back), codes)
    ages = back.data["age"].to_numpy()
    assert ages.dtype.kind == "i"
    assert set(ages[codes[:, 0] == 5]) == set(range(50, 60))   # every integer of the bin


def test_bad_input():
    t = _table()
    with pytest.raises(PrivpubError, match="n_bins"):
        MarginalDomain.from_table(t, n_bins=0)
    d = MarginalDomain.from_table(t)
    with pytest.raises(PrivpubError, match="codes outside"):
        d.decode(np.full((1, 4), 50), np.random.default_rng(0))
    bad = Table(t.data.assign(y=["a", "z", "b", "a"]), t.schema)
    with pytest.raises(PrivpubError, match="outside its domain"):
        d.encode(bad)
