"""Top-k overlap (farias2021 Sec. 6.1)."""

import numpy as np
import pytest

from privpub.errors import PrivpubError
from privpub.metrics.ranking import topk_overlap
from privpub.types import Ranking


def test_hand_values():
    truth = Ranking([7, 3, 9, 1, 4, 8])
    assert topk_overlap(truth, Ranking([3, 7, 9])) == 1.0  # order inside top-k is irrelevant
    assert topk_overlap(truth, Ranking([3, 1, 5])) == pytest.approx(1 / 3)  # 1 is rank 4
    assert topk_overlap(truth, Ranking([0, 2, 5])) == 0.0


def test_explicit_k():
    truth = Ranking([7, 3, 9, 1])
    assert topk_overlap(truth, Ranking([1, 3, 9]), k=2) == pytest.approx(1 / 2)  # [1, 3] vs [7, 3]
    # a release shorter than k: missing items are misses
    assert topk_overlap(truth, Ranking([7]), k=2) == pytest.approx(1 / 2)


def test_not_symmetric():
    a, b = Ranking([1, 2, 3, 4]), Ranking([4, 5])
    assert topk_overlap(a, b) == 0.0  # true top-2 = {1, 2}
    assert topk_overlap(b, a, k=2) == 0.0
    assert topk_overlap(b, Ranking([4])) == 1.0


def test_string_ids():
    assert topk_overlap(Ranking(["a", "b", "c"]), Ranking(["b", "z"])) == 0.5


def test_errors():
    with pytest.raises(PrivpubError, match="fewer than k"):
        topk_overlap(Ranking([1]), Ranking([1, 2]))
    with pytest.raises(PrivpubError, match="repeats"):
        topk_overlap(Ranking([1, 2, 3]), Ranking([1, 1]))
    with pytest.raises(PrivpubError, match="release ranking is empty"):
        topk_overlap(Ranking([1]), Ranking([]))
    with pytest.raises(PrivpubError, match="NaN"):
        topk_overlap(Ranking([1.0, 2.0]), Ranking([np.nan]))
    with pytest.raises(PrivpubError, match="k must be"):
        topk_overlap(Ranking([1]), Ranking([1]), k=0)
    with pytest.raises(PrivpubError, match="same type"):
        topk_overlap([1, 2], Ranking([1]))
