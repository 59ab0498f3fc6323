"""EMD, KS and L1 against scipy and hand values (day2016 Sec. 2.1, qardaji2012 Sec. 4.1)."""

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

from privpub.errors import PrivpubError
from privpub.metrics.distributions import (
    emd,
    emd_p2,
    histogram_distribution,
    ks,
    ks_histograms,
    ks_sampled,
    ks_samples,
    l1,
    l1_counts,
    l1_histograms,
    sequence_histogram,
    wasserstein_histograms,
    wasserstein_samples,
)
from privpub.types import Attribute, DegreeHistogram, DegreeSequence, Graph, Schema, Table


def expand(counts):
    """The degree sequence of an integer count histogram."""
    counts = np.asarray(counts, dtype=int)
    return np.repeat(np.arange(counts.size), counts)


def table(values, name="x"):
    return Table(pd.DataFrame({name: values}), Schema((Attribute(name, "numeric", (0, 100)),)))


# --------------------------------------------------------------------------- building blocks
def test_histogram_distribution_clips_and_normalises():
    np.testing.assert_allclose(histogram_distribution([2.0, -1.0, 6.0]), [0.25, 0.0, 0.75])


def test_histogram_distribution_rejects_no_mass_nan_and_empty():
    with pytest.raises(PrivpubError, match="no positive count"):
        histogram_distribution([-1.0, 0.0])
    with pytest.raises(PrivpubError, match="NaN"):
        histogram_distribution([1.0, np.nan])
    with pytest.raises(PrivpubError, match="empty"):
        histogram_distribution([])


def test_sequence_histogram_rounds_and_clips():
    np.testing.assert_array_equal(sequence_histogram([0.4, 1.6, -3.0, 2.0, 1.2]), [2, 1, 2])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wasserstein_samples_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=40), rng.exponential(3.0, size=65)
    assert wasserstein_samples(u, v) == pytest.approx(st.wasserstein_distance(u, v))


def test_wasserstein_p2_is_qardaji_formula_for_equal_sizes():
    rng = np.random.default_rng(3)
    x, y = rng.normal(50, 25, size=200), rng.normal(55, 20, size=200)
    expected = np.sqrt(np.mean((np.sort(x) - np.sort(y)) ** 2))
    assert wasserstein_samples(x, y, p=2) == pytest.approx(expected)
    assert wasserstein_samples(x, y, p=2) > wasserstein_samples(x, y, p=1)


def test_wasserstein_p2_unequal_sizes_equals_replicated_samples():
    # Replicating each point of u 7 times and of v 5 times leaves both distributions unchanged
    # and makes the sizes equal (350), where the sorted-pairs formula applies.
    rng = np.random.default_rng(4)
    u, v = rng.normal(size=50), rng.normal(1.0, 2.0, size=70)
    uu, vv = np.sort(np.repeat(u, 7)), np.sort(np.repeat(v, 5))
    assert wasserstein_samples(u, v, p=2) == pytest.approx(np.sqrt(np.mean((uu - vv) ** 2)))
    # and the general quantile code agrees with scipy at p = 1 as well
    assert wasserstein_samples(u, v, p=1.0000001) == pytest.approx(
        st.wasserstein_distance(u, v), rel=1e-5
    )


def test_wasserstein_histograms_matches_scipy_with_weights_and_padding():
    h, g = np.array([1.0, 3.0, 0.0, 2.0]), np.array([0.0, 1.0, 4.0, 0.0, 0.0, 1.0])
    expected = st.wasserstein_distance(np.arange(4), np.arange(6), h, g)
    assert wasserstein_histograms(h, g) == pytest.approx(expected)
    assert wasserstein_histograms(g, h) == pytest.approx(expected)  # symmetric


def test_wasserstein_histograms_hand_value():
    # all mass at 0 vs all mass at 3: move one unit of mass 3 steps
    assert wasserstein_histograms([5.0], [0, 0, 0, 2.0]) == pytest.approx(3.0)
    assert wasserstein_histograms([5.0], [0, 0, 0, 2.0], p=2) == pytest.approx(3.0)


def test_wasserstein_bad_p():
    with pytest.raises(PrivpubError, match="p must be"):
        wasserstein_samples([1.0], [2.0], p=0.5)
    with pytest.raises(PrivpubError, match="p must be"):
        wasserstein_samples([1.0], [2.0], p="two")


@pytest.mark.parametrize("seed", [0, 5])
def test_ks_samples_matches_ks_2samp(seed):
    rng = np.random.default_rng(seed)
    u, v = rng.poisson(4, size=80).astype(float), rng.poisson(5, size=33).astype(float)
    assert ks_samples(u, v) == pytest.approx(st.ks_2samp(u, v).statistic)


def test_ks_histograms_equals_ks_2samp_of_expanded_sequences():
    rng = np.random.default_rng(7)
    h, g = rng.integers(0, 9, size=12), rng.integers(0, 9, size=20)  # different lengths
    expected = st.ks_2samp(expand(h), expand(g)).statistic
    assert ks_histograms(h, g) == pytest.approx(expected)
    assert ks_histograms(g, h) == pytest.approx(expected)


def test_ks_histograms_hand_value_with_padding():
    # d = (1/2, 1/2), d' = (0, 1/2, 0, 1/2): CDFs (1/2, 1, 1, 1) and (0, 1/2, 1/2, 1)
    assert ks_histograms([1, 1], [0, 1, 0, 1]) == pytest.approx(0.5)


def test_l1_histograms_normalised_and_padded_hand_value():
    # (1/4, 3/4) vs (1/2, 0, 1/2): |1/4-1/2| + |3/4-0| + |0-1/2| = 1.5
    assert l1_histograms([1, 3], [1, 0, 1]) == pytest.approx(1.5)
    assert l1_histograms([1, 0, 1], [1, 3]) == pytest.approx(1.5)
    # disjoint supports reach the maximum 2
    assert l1_histograms([1], [0, 1]) == pytest.approx(2.0)


def test_l1_histograms_counts_are_not_normalised_or_clipped():
    assert l1_histograms([1, 3], [1, 0, 1], normalize=False) == pytest.approx(0 + 3 + 1)
    assert l1_histograms([2.0], [-1.0], normalize=False) == pytest.approx(3.0)


# --------------------------------------------------------------------------- registered, by kind
def test_degree_histogram_metrics_clip_negative_noisy_counts():
    truth = DegreeHistogram([2.0, 2.0])
    noisy = DegreeHistogram([2.0, -5.0, 2.0])  # -> (1/2, 0, 1/2)
    assert l1(truth, noisy) == pytest.approx(0 + 0.5 + 0.5)
    assert ks(truth, noisy) == pytest.approx(0.5)
    assert emd(truth, noisy) == pytest.approx(0.5)  # half the mass moves from 1 to 2
    assert l1_counts(truth, noisy) == pytest.approx(0 + 7 + 2)


def test_degree_histogram_metrics_on_a_graph():
    g = Graph.from_edges([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])  # degrees 3, 2, 3, 2
    h = g.degree_histogram()
    assert l1(h, h) == 0.0 and ks(h, h) == 0.0 and emd(h, h) == 0.0
    shifted = DegreeHistogram(np.r_[0.0, h.counts])  # every degree + 1
    assert emd(h, shifted) == pytest.approx(1.0)
    assert l1(h, shifted) == pytest.approx(1.0)  # (0,0,.5,.5) vs (0,0,0,.5,.5)
    assert ks(h, shifted) == pytest.approx(0.5)


def test_release_without_mass_scores_worst_and_nan_fails_clearly():
    truth, empty = DegreeHistogram([1.0, 2.0]), DegreeHistogram([-1.0, 0.0])
    assert l1(truth, empty) == 2.0  # the largest L1 distance between distributions
    assert ks(truth, empty) == 1.0
    assert ks_sampled(truth, empty, rng=0) == 1.0
    assert l1_counts(truth, empty) == pytest.approx(4.0)  # raw counts stay as they are
    with pytest.raises(PrivpubError, match="truth histogram has no positive count"):
        l1(empty, truth)  # an empty truth is an error, not a score
    with pytest.raises(PrivpubError, match="release counts contain NaN"):
        ks(DegreeHistogram([1.0, 2.0]), DegreeHistogram([1.0, np.nan]))


def test_degree_sequence_metrics_are_sample_metrics():
    rng = np.random.default_rng(11)
    t = rng.poisson(6, size=300).astype(float)
    r = t + rng.laplace(0, 2, size=300)
    truth, release = DegreeSequence(t), DegreeSequence(r)
    assert emd(truth, release) == pytest.approx(st.wasserstein_distance(t, r))
    assert ks(truth, release) == pytest.approx(st.ks_2samp(t, r).statistic)
    assert emd_p2(truth, release) == pytest.approx(np.sqrt(np.mean((np.sort(t) - np.sort(r)) ** 2)))
    # L1 goes through the histograms of the rounded, non-negative degrees
    assert l1(truth, release) == pytest.approx(
        l1_histograms(sequence_histogram(t), sequence_histogram(r))
    )


def test_degree_sequence_and_histogram_agree_on_integer_data():
    rng = np.random.default_rng(12)
    counts = rng.integers(0, 20, size=15).astype(float)
    noisy = np.clip(counts + rng.integers(-3, 4, size=15), 0, None)
    hk = ks(DegreeHistogram(counts), DegreeHistogram(noisy))
    sk = ks(DegreeSequence(expand(counts)), DegreeSequence(expand(noisy)))
    assert hk == pytest.approx(sk)
    he = emd(DegreeHistogram(counts), DegreeHistogram(noisy))
    se = emd(DegreeSequence(expand(counts)), DegreeSequence(expand(noisy)))
    assert he == pytest.approx(se)


def test_table_column_metrics():
    rng = np.random.default_rng(13)
    x, y = rng.normal(50, 25, size=400), rng.normal(52, 25, size=350)
    assert emd(table(x), table(y)) == pytest.approx(st.wasserstein_distance(x, y))
    assert ks(table(x), table(y)) == pytest.approx(st.ks_2samp(x, y).statistic)


def test_table_column_choice():
    schema = Schema((Attribute("a", "numeric", (0, 1)), Attribute("b", "numeric", (0, 1))))
    t = Table(pd.DataFrame({"a": [0.0, 1.0], "b": [0.0, 0.0]}), schema)
    r = Table(pd.DataFrame({"a": [0.0, 1.0], "b": [1.0, 1.0]}), schema)
    with pytest.raises(PrivpubError, match="pass column="):
        emd(t, r)
    assert emd(t, r, column="a") == 0.0
    assert emd(t, r, column="b") == pytest.approx(1.0)
    with pytest.raises(PrivpubError, match="no column 'c'"):
        emd(t, r, column="c")


def test_table_with_nan_fails_clearly():
    with pytest.raises(PrivpubError, match="release column 'x' values contain NaN"):
        emd(table([1.0, 2.0]), table([1.0, np.nan]))
    with pytest.raises(PrivpubError, match="release column 'x' values are empty"):
        ks(table([1.0, 2.0]), table(np.array([], dtype=float)))


def test_mismatched_types_fail_clearly():
    with pytest.raises(PrivpubError, match="same type"):
        emd(DegreeHistogram([1.0]), DegreeSequence([1.0]))
    with pytest.raises(PrivpubError, match="same type"):
        ks(DegreeSequence([1.0]), table([1.0]))
    with pytest.raises(PrivpubError, match="same type"):
        l1(np.array([1.0]), np.array([1.0]))


def test_error_messages_name_truth_or_release():
    with pytest.raises(PrivpubError, match="^truth"):
        l1(DegreeHistogram([np.nan]), DegreeHistogram([1.0]))


# --------------------------------------------------------------------------- ks_sampled
def test_ks_sampled_is_seeded_and_close_to_ks():
    truth = DegreeHistogram(np.bincount(np.random.default_rng(0).poisson(8, size=5000)))
    noise = np.random.default_rng(1).laplace(0, 20, truth.counts.size)
    release = DegreeHistogram(truth.counts + noise)
    a = ks_sampled(truth, release, rng=np.random.default_rng(42))
    b = ks_sampled(truth, release, rng=np.random.default_rng(42))
    assert a == b
    # sampling noise is O(1/sqrt(n)) around the KS of the distributions
    assert abs(a - ks(truth, release)) < 0.05
    # identical distributions: only sampling noise remains, and it is not exactly zero
    same = ks_sampled(truth, truth, rng=np.random.default_rng(3))
    assert 0 < same < 0.05


def test_ks_sampled_equals_ks_2samp_of_the_generated_sequence():
    truth = DegreeHistogram([3.0, 5.0, 2.0])
    release = DegreeHistogram([1.0, -2.0, 4.0, 1.0])
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    value = ks_sampled(truth, release, rng=rng_a)
    sampled = rng_b.multinomial(10, histogram_distribution(release.counts))
    expected = st.ks_2samp(expand(truth.counts), expand(sampled)).statistic
    assert value == pytest.approx(expected)


def test_ks_sampled_errors():
    with pytest.raises(PrivpubError, match="n_samples"):
        ks_sampled(DegreeHistogram([1.0]), DegreeHistogram([1.0]), n_samples=0, rng=0)
    with pytest.raises(PrivpubError, match="same type"):
        ks_sampled(DegreeSequence([1.0]), DegreeSequence([1.0]), rng=0)
