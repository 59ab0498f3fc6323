"""Pygmalion (sala2011 Sec 5): the synthetic graph from each dK-2 release."""

import numpy as np
import pytest

from privpub.algorithms.dk import joint_degree
from privpub.data import load_dataset
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.pygmalion import pygmalion
from privpub.registry import get_mechanism
from privpub.types import Graph, JointDegree, Release


@pytest.fixture(scope="module")
def karate():
    return load_dataset("karate")


def rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------- validation
def test_bad_epsilon_and_input_are_clear_errors(karate):
    for eps in (0, -1, float("nan"), float("inf"), "1"):
        with pytest.raises(PrivpubError, match="epsilon"):
            pygmalion(karate, epsilon=eps, rng=rng())
    with pytest.raises(PrivpubError, match="Graph"):
        pygmalion(np.ones((3, 3)), epsilon=1.0, rng=rng())


def test_bad_options(karate):
    with pytest.raises(PrivpubError, match="method"):
        pygmalion(karate, epsilon=1.0, method="ideal", rng=rng())
    with pytest.raises(PrivpubError, match="generator"):
        pygmalion(karate, epsilon=1.0, generator="fast", rng=rng())
    # the true-count order is no option of the DP mechanism
    with pytest.raises(PrivpubError, match="order must be one of"):
        pygmalion(karate, epsilon=1.0, order="true_counts", rng=rng(3))
    info = get_mechanism("pygmalion_true_count_order")
    assert info.privacy == "none" and not info.is_dp and "TRUE counts" in info.caveat


def test_ledgers_spend_epsilon_once(karate):
    for kw in ({}, {"method": "drc_honest"}):
        ledger = PrivacyLedger(3.0)
        pygmalion(karate, epsilon=3.0, rng=rng(), ledger=ledger, **kw)
        assert ledger.spent == pytest.approx(3.0)


# --------------------------------------------------------------------------- graphs
def test_pygmalion_graph(karate):
    out = pygmalion(karate, epsilon=100.0, rng=rng(1))
    assert isinstance(out.value, Graph)
    assert set(out.info) == {"repair_l1", "generation_l1", "dropped_edges", "nodes", "edges"}
    assert out.info["generation_l1"] == 0
    for method in ("drc", "dk_pa", "drc_honest"):
        assert isinstance(pygmalion(karate, epsilon=5.0, method=method, rng=rng()).value, Graph)


# the name under which mechanisms.pygmalion calls each method's release
_RELEASE_OF = {"ldrc": "ldrc", "drc": "drc", "dk_pa": "dk_pa_series", "drc_honest": "drc_honest"}


@pytest.mark.parametrize("method", ["ldrc", "drc", "dk_pa", "drc_honest"])
def test_graph_step_reads_only_the_noisy_release(method, karate, monkeypatch):
    """The repair and generation are post-processing: once the noisy dK-2 series is fixed,
    the synthetic graph must not depend on the original graph. Two different graphs whose
    (patched) noisy releases are the same series must give the same graph, equal to
    ``synthesize`` of that series alone."""
    import privpub.mechanisms.pygmalion as pyg

    jd = joint_degree(karate)
    noisy = JointDegree(jd.low, jd.high, jd.counts + rng(12).laplace(0, 3, jd.size))

    def fixed(graph, **kw):
        return Release(noisy, {}) if method == "drc_honest" else noisy

    monkeypatch.setattr(pyg, _RELEASE_OF[method], fixed)
    other = load_dataset("les_miserables")
    a = pyg.pygmalion(karate, epsilon=1.0, method=method, rng=rng(13)).value
    b = pyg.pygmalion(other, epsilon=1.0, method=method, rng=rng(13)).value
    alone = pyg.synthesize(noisy, rng=rng(13)).value
    assert np.array_equal(a.edges(), b.edges())
    assert np.array_equal(a.edges(), alone.edges())


def test_pygmalion_caveats_follow_the_method():
    info = get_mechanism("pygmalion")
    assert info.caveat_for({}) and "DRC" in info.caveat_for({})
    assert info.caveat_for({"method": "drc_honest"}) is None
    assert get_mechanism("drc_honest").caveat is None
    for name in ("drc", "ldrc", "dk_pa"):
        assert get_mechanism(name).caveat


def test_same_seed_same_release(karate):
    a = pygmalion(karate, epsilon=10.0, rng=rng(4)).value
    b = pygmalion(karate, epsilon=10.0, rng=rng(4)).value
    assert np.array_equal(a.edges(), b.edges())


def test_too_large_a_noisy_series_is_not_applicable(karate):
    with pytest.raises(NotApplicableError, match="max_edges"):
        pygmalion(karate, epsilon=0.5, max_edges=100, rng=rng())
