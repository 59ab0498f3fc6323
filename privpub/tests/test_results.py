"""The one row selector of figures, tables and claims (``privpub/results.py``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from privpub.errors import ConfigError, PrivpubError
from privpub.results import check_condition, comparison, condition_mask, select_rows


def _frame():
    return pd.DataFrame(
        {
            "dataset": ["facebook", "facebook", "enron", "enron", "facebook"],
            "dataset_label": ["Facebook", "Facebook", "enron (lcc=true)", "enron (lcc=true)",
                              "Facebook"],
            "label": ["RPS", "RPS", "Flowgraph", "Flowgraph", "original"],
            "epsilon": [0.1 + 0.2, 1.0, 0.30000001, 2.0, math.nan],
            "bound": [10, "n_minus_1", 10, 5, None],
        }
    )


def _labels(frame, where, empty="drop"):
    return select_rows(frame, where, empty=empty).index.tolist()


def test_numbers_match_up_to_a_relative_1e_12_in_values_and_comparisons():
    frame = _frame()
    assert 0.1 + 0.2 != 0.3  # the stored number is not the printed one
    assert _labels(frame, {"epsilon": 0.3}) == [0]
    assert _labels(frame, {"epsilon": "== 0.3"}) == [0]
    assert _labels(frame, {"epsilon": "<= 0.3"}) == [0]
    assert _labels(frame, {"epsilon": "< 0.3"}) == []
    assert _labels(frame, {"epsilon": ">= 0.3"}) == [0, 1, 2, 3]
    assert _labels(frame, {"epsilon": "> 0.3"}) == [1, 2, 3]  # 0.30000001 is another number
    assert _labels(frame, {"epsilon": "!= 0.3"}) == [1, 2, 3]
    assert _labels(frame, {"epsilon": "0.3"}) == [0]  # text that reads as a number


def test_empty_values_follow_the_stated_policy():
    frame = _frame()
    for where in ({"epsilon": 1}, {"epsilon": ">= 0.5"}, {"epsilon": "!= 1"}, {"epsilon": [1]}):
        dropped = _labels(frame, where, "drop")
        kept = _labels(frame, where, "keep")
        assert 4 not in dropped
        assert kept == sorted([*dropped, 4])
    with pytest.raises(PrivpubError, match="empty must be one of"):
        condition_mask(frame, "epsilon", 1, empty="ignore")


def test_text_is_compared_as_text():
    frame = _frame()
    assert _labels(frame, {"label": "RPS"}) == [0, 1]
    assert _labels(frame, {"label": "== Flowgraph"}) == [2, 3]
    assert _labels(frame, {"label": "!= RPS"}) == [2, 3, 4]
    assert _labels(frame, {"label": "rps"}) == []  # case matters
    assert _labels(frame, {"label": 5}) == []


def test_a_column_of_numbers_and_text():
    frame = _frame()
    assert _labels(frame, {"bound": 10}) == [0, 2]
    assert _labels(frame, {"bound": "n_minus_1"}) == [1]
    # a value that is no number never satisfies a comparison of numbers, even !=
    assert _labels(frame, {"bound": "!= 10"}) == [3]
    assert _labels(frame, {"bound": "!= 10"}, "keep") == [3, 4]


def test_lists_are_any_of_their_values():
    frame = _frame()
    assert _labels(frame, {"epsilon": [1, 2]}) == [1, 3]
    assert _labels(frame, {"epsilon": ["< 0.5", 2]}) == [0, 2, 3]
    assert _labels(frame, {"label": ("RPS", "original")}) == [0, 1, 4]


def test_conditions_combine_and_booleans_are_numbers():
    frame = _frame().assign(flag=[True, False, True, False, True])
    assert _labels(frame, {"flag": True, "label": "RPS"}) == [0]
    assert _labels(frame, {"flag": 1}) == [0, 2, 4]
    assert _labels(frame, None) == [0, 1, 2, 3, 4]
    assert _labels(frame, {}) == [0, 1, 2, 3, 4]


def test_dataset_matches_its_name_or_its_display_label():
    frame = _frame()
    assert _labels(frame, {"dataset": "facebook"}) == [0, 1, 4]
    assert _labels(frame, {"dataset": "Facebook"}) == [0, 1, 4]
    assert _labels(frame, {"dataset": "enron (lcc=true)"}) == [2, 3]
    assert _labels(frame, {"dataset": "!= facebook"}) == [2, 3]  # by neither name
    assert _labels(frame, {"dataset": "!= Facebook"}) == [2, 3]
    assert _labels(frame, {"dataset": ["enron"]}) == [2, 3]
    # only dataset has a display label
    assert _labels(frame, {"label": "Facebook"}) == []
    # without the label column, the name alone
    assert _labels(frame.drop(columns="dataset_label"), {"dataset": "Facebook"}) == []


def test_a_missing_column_or_a_bad_comparison_is_one_clear_error():
    frame = _frame()
    with pytest.raises(PrivpubError, match="no column 'depth'"):
        select_rows(frame, {"depth": 5}, empty="keep")
    with pytest.raises(ConfigError, match="needs a number after '>='"):
        select_rows(frame, {"label": ">= RPS"}, empty="keep")
    # the mask is a plain boolean array aligned with the frame
    mask = condition_mask(frame, "label", "RPS", empty="drop")
    assert isinstance(mask, np.ndarray) and mask.dtype == bool and len(mask) == len(frame)


def test_check_condition_and_comparison():
    assert check_condition((1, 2)) == [1, 2]
    assert check_condition(">= 0.5") == ">= 0.5"
    assert check_condition("!= adult") == "!= adult"
    assert check_condition("RPS") == "RPS"
    for bad, message in (
        ([], "an empty list matches nothing"),
        ([1, [2]], "must hold scalars"),
        ([None], "must hold scalars"),
        ({"a": 1}, "a condition must be a value"),
        (None, "a condition must be a value"),
        ("< small", "needs a number after '<'"),
    ):
        with pytest.raises(ConfigError, match=message):
            check_condition(bad)
    assert comparison(" >= 0.5 ") == (">=", "0.5")
    assert comparison("!= adult") == ("!=", "adult")
    assert comparison("RPS") is None and comparison(5) is None
