"""The noise-free limit of every DP mechanism.

Under :func:`privpub.noise.noise_off` every noise primitive draws zero and the exponential
mechanism picks its best candidate, while the mechanism runs its own code. So, if every
piece of *privacy* randomness goes through :mod:`privpub.noise`, the release no longer
depends on the seed: a mechanism that draws noise from ``rng`` directly fails
:func:`test_noise_off_release_does_not_depend_on_the_seed`. Mechanisms whose remaining
randomness is part of what they release (not privacy noise) are listed in
:data:`INTRINSIC` with the reason and the deterministic setting they are checked in.

The second half checks that the noise-free release equals a deterministic reference
computed independently of the mechanism (the true histogram, the true sorted degree
sequence, the projected histogram at the theta the quality function prefers, the input
matrix, ...): the noise-free limit is the mechanism's structure, and nothing else.

sala2011's mechanisms (``pygmalion``, ``drc``, ``drc_honest``, ``ldrc``, ``dk_pa``) are
covered by their own engineer's tests and excluded here.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import privpub.baselines  # noqa: F401  (registers)
import privpub.mechanisms  # noqa: F401  (registers)
from privpub.data import load_dataset
from privpub.noise import (
    exponential_mechanism,
    is_noise_off,
    laplace_mechanism,
    noise_off,
    uniform_integers,
)
from privpub.registry import get_mechanism
from privpub.registry import mechanisms as registered
from privpub.types import DegreeHistogram, DegreeSequence, Graph, Ranking, Release, Table

#: sala2011's mechanisms: their noise-free limits are tested in mechanisms/tests (test_drc.py,
#: test_pygmalion.py), not here.
EXCLUDED = {"pygmalion", "drc", "drc_honest", "ldrc", "dk_pa",
            # PGB's synthetic-graph generators: drawing the graph from the noisy model is
            # random by design (post-processing, not privacy noise); each one's noise-free
            # limit is tested in mechanisms/tests/test_<name>.py
            "dgg", "dp_dk", "ldpgen", "priv_hrg", "priv_skg", "privgraph", "tmf",
            "tmf_as_published",
            # the marginal-based table synthesizers: drawing the synthetic rows from the
            # fitted model is random by design (mbi's and DataSynthesizer's samplers); their
            # noise-free limits are tested in mechanisms/tests/test_private_pgm.py and
            # test_privbayes.py
            "aim", "mst", "privbayes"}

#: Mechanisms whose non-noise randomness is intrinsic, with the reason and the parameters
#: under which their noise-free release is deterministic (checked like the others).
INTRINSIC = {
    "rps_table": (
        "synthetic rows are drawn uniformly in each leaf (summary='uniform', the default), "
        "categorical attributes get a seeded random order and the released rows are "
        "shuffled: none of this is privacy noise",
        {"summary": "midpoint"},  # numeric table, rows compared as a sorted multiset
    ),
}

#: Extra parameters every call needs beyond epsilon (small inputs, fast).
PARAMS = {
    # shallow trees keep wide leaves, whose lower bounds show the cut inside a group
    "rps_degree_sequence": {"depth": 3},
    "rps_degree_histogram": {"depth": 3},
    "rps_table": {"depth": 3},
    "truncation": {"theta": 4},
    "theta_histogram_fixed": {"theta": 8},
    "theta_histogram": {"theta_max": 20},
    "theta_omega_histogram": {"theta_max": 20},
    "theta_cumulative_histogram": {"theta_max": 20},
    "theta_constrained": {"theta_max": 20},
    "flowgraph": {"theta_max": 16},
    "global_priv_topk": {"k": 5},
    "local_priv_topk": {"k": 5},
    "shifted_local_priv_topk": {"k": 5},
    "privatesql_topk": {"k": 3},
    "global_diffpid3": {"depth": 3},
    "local_diffpid3": {"depth": 3},
    "shifted_local_diffpid3": {"depth": 3},
}


#: A small table with a class attribute (3 Gaussian components), the same in every test.
_TABLE = load_dataset("gaussian_mixture", n=300, rng=0)


def _dp_mechanisms() -> list[str]:
    return sorted(n for n, m in registered().items() if m.is_dp and n not in EXCLUDED)


@pytest.fixture(scope="module")
def karate() -> Graph:
    return load_dataset("karate")


@pytest.fixture(scope="module")
def les_miserables() -> Graph:
    """77 nodes whose degrees leave gaps: an exponential-mechanism group of several equally
    scored cuts, so a direct draw of the cut inside it would show."""
    return load_dataset("les_miserables")


@pytest.fixture(scope="module")
def inputs(les_miserables):
    """One small input per input kind."""
    rng = np.random.default_rng(7)
    dense = (rng.random((30, 40)) < 0.1).astype(np.int8)
    return {
        "graph": les_miserables,
        "table": _TABLE,
        "binary_matrix": sp.csr_array(dense),
    }


def _canonical(release):
    """A plain array (or frame) that two equal releases share."""
    value = release.value if isinstance(release, Release) else release
    if isinstance(value, DegreeHistogram):
        return np.trim_zeros(np.asarray(value.counts, dtype=float), "b")
    if isinstance(value, DegreeSequence):
        return np.sort(np.asarray(value.values, dtype=float))
    if isinstance(value, Ranking):
        return np.asarray(value.items)
    if isinstance(value, Table):  # a multiset of rows: order is not part of the release
        frame = value.data.reset_index(drop=True)
        return frame.sort_values(list(frame.columns), kind="stable").reset_index(drop=True)
    if sp.issparse(value):
        return value.toarray()
    if hasattr(value, "predict"):  # a released classifier: its predictions on a fixed table
        return np.asarray(value.predict(_TABLE))
    raise AssertionError(f"no canonical form for {type(value).__name__}")


def _equal(a, b) -> bool:
    if isinstance(a, pd.DataFrame):
        return a.shape == b.shape and a.equals(b)
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fiub" and b.dtype.kind in "fiub":
        return bool(np.allclose(a, b, rtol=0, atol=1e-9))
    return bool(np.array_equal(a, b))


def _run(name, data, seed, **params):
    info = get_mechanism(name)
    call = {"epsilon": 1.0, **PARAMS.get(name, {}), **INTRINSIC.get(name, ("", {}))[1], **params}
    return info.func(data, rng=np.random.default_rng(seed), **call)


def test_the_audit_covers_every_dp_mechanism():
    """A DP mechanism registered later is audited automatically; the exclusions exist."""
    names = _dp_mechanisms()
    assert {"rps_degree_sequence", "hay_degree_sequence", "theta_cumulative_histogram",
            "truncation", "randomized_response_edge", "flowgraph"} <= set(names)
    assert EXCLUDED <= set(registered()), "an excluded name is no longer registered"
    for name in INTRINSIC:
        assert name in names
    for name, params in PARAMS.items():
        accepted = set(get_mechanism(name).parameters)
        assert set(params) <= accepted, name


@pytest.mark.parametrize("name", _dp_mechanisms())
def test_noise_off_release_does_not_depend_on_the_seed(name, inputs):
    """Every privacy-noise draw goes through privpub.noise: with the noise off, two seeds
    give the same release (INTRINSIC mechanisms in their deterministic setting)."""
    info = get_mechanism(name)
    data = inputs[info.input_kind]
    with noise_off():
        first = _canonical(_run(name, data, 1))
        second = _canonical(_run(name, data, 2))
    assert _equal(first, second), f"{name}: the noise-free release depends on the seed"


@pytest.mark.parametrize("name", ["rps_degree_sequence", "hay_degree_sequence", "truncation",
                                  "theta_cumulative_histogram", "randomized_response_edge"])
def test_with_noise_the_seed_matters(name, inputs):
    """The check above can fail: with the noise on, the same two seeds differ."""
    info = get_mechanism(name)
    data = inputs[info.input_kind]
    assert not _equal(_canonical(_run(name, data, 1)), _canonical(_run(name, data, 2)))


def test_a_direct_draw_inside_a_mechanism_is_caught(les_miserables, monkeypatch):
    """Mutation check: were RPS's uniform cut inside an exponential-mechanism group or
    Truncation's random cutoff drawn from rng directly, the audit would fail."""
    import privpub.baselines.truncation as truncation
    import privpub.mechanisms.rps.partition as rps

    def direct(low, high, *, rng, size=None):
        return rng.integers(low, high, size=size)

    monkeypatch.setattr(rps, "uniform_integers", direct)
    monkeypatch.setattr(truncation, "uniform_integers", direct)
    for name in ("rps_degree_sequence", "truncation"):
        with noise_off():
            first = _canonical(_run(name, les_miserables, 1))
            second = _canonical(_run(name, les_miserables, 2))
        assert not _equal(first, second), name


def test_a_direct_rng_draw_is_caught(karate):
    """A mechanism drawing its noise from rng directly (not through privpub.noise) gives
    seed-dependent noise-free releases: the audit's test would fail on it."""

    def leaky(graph, *, epsilon, rng):
        counts = graph.degree_histogram().counts
        return DegreeHistogram(counts + rng.laplace(0, 2 / epsilon, size=counts.size))

    with noise_off():
        a = _canonical(leaky(karate, epsilon=1.0, rng=np.random.default_rng(1)))
        b = _canonical(leaky(karate, epsilon=1.0, rng=np.random.default_rng(2)))
    assert not _equal(a, b)


# --------------------------------------------------------------------------- primitives
def test_uniform_integers_keeps_the_stream_and_is_low_without_noise():
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    drawn = [int(uniform_integers(0, s, rng=a)) for s in (5, 7, 1, 100, 3) * 20]
    direct = [int(b.integers(s)) for s in (5, 7, 1, 100, 3) * 20]
    assert drawn == direct and a.random() == b.random()
    with noise_off():
        assert is_noise_off()
        assert uniform_integers(4, 9, rng=np.random.default_rng(0)) == 4
        assert np.array_equal(uniform_integers(2, 5, rng=np.random.default_rng(0), size=3),
                              [2, 2, 2])
    assert not is_noise_off()


def test_noise_off_primitives_are_exact():
    counts = np.array([3.0, 0.0, 7.0, 1.0])
    with noise_off():
        out = laplace_mechanism(counts, sensitivity=2, epsilon=0.01,
                                rng=np.random.default_rng(0))
        pick = exponential_mechanism([1.0, 5.0, 5.0, 2.0], sensitivity=1, epsilon=1e-6,
                                     rng=np.random.default_rng(0))
    assert np.array_equal(out, counts)
    assert pick == 1  # the best candidate, ties to the lowest index


# --------------------------------------------------------------------------- references
def _true_histogram(graph: Graph) -> np.ndarray:
    return np.bincount(graph.degrees()).astype(float)


def test_fixed_theta_histogram_without_noise_is_the_true_histogram(karate):
    """A Laplace-noised histogram (fixed theta >= d_max: nothing is projected away)
    equals the true degree histogram (degree 0 counted in bin 1, day2016's convention)."""
    d_max = int(karate.degrees().max())
    with noise_off():
        out = _canonical(get_mechanism("theta_histogram_fixed").func(
            karate, epsilon=0.5, theta=d_max, rng=np.random.default_rng(0)))
    truth = _true_histogram(karate)
    truth[1] += truth[0]
    truth[0] = 0
    assert _equal(out, np.trim_zeros(truth, "b"))


def test_hay_without_noise_is_the_true_sorted_sequence(karate):
    for bound in ("max_degree", "n_minus_1"):
        with noise_off():
            out = get_mechanism("hay_degree_sequence").func(
                karate, epsilon=0.1, degree_bound=bound, rng=np.random.default_rng(0))
        assert np.array_equal(np.sort(out.value.values), np.sort(karate.degrees()))


def test_theta_cumulative_without_noise_is_the_projection_at_the_preferred_theta(karate):
    """theta-Cumulative at noise-off: the exponential mechanism takes the argmax of the
    quality q^c (Q-Best's theta), and the released histogram is the exact histogram of
    pi_theta(G) at that theta."""
    from privpub.mechanisms.degree_projection import projected_degrees, projection_profile
    from privpub.mechanisms.theta_cumulative import EPSILON1_FRACTION, cumulative_quality

    epsilon = 1.0
    profile = projection_profile(karate, 20, order="lexicographic")
    quality = cumulative_quality(profile, epsilon * (1 - EPSILON1_FRACTION))
    theta = int(np.argmax(quality)) + 1
    with noise_off():
        out = get_mechanism("theta_cumulative_histogram").func(
            karate, epsilon=epsilon, theta_max=20, rng=np.random.default_rng(0))
    assert out.info["theta"] == theta
    projected = np.bincount(projected_degrees(karate, theta), minlength=theta + 1).astype(float)
    projected[1] += projected[0]
    projected[0] = 0
    released = np.asarray(out.value.counts, dtype=float)
    assert _equal(released[:theta], projected[:theta])
    # Algorithm 5's tail spreads bin theta's nodes over theta, theta + 1, ...: mass kept
    assert released[theta:].sum() == pytest.approx(projected[theta])
    assert theta < int(karate.degrees().max())  # the check is not vacuous: pi_theta cuts


def test_randomized_response_edge_without_noise_is_the_input(inputs):
    m = inputs["binary_matrix"]
    for name in ("randomized_response_edge", "randomized_response_node"):
        with noise_off():
            out = get_mechanism(name).func(m, epsilon=0.5, rng=np.random.default_rng(0))
        assert np.array_equal(_canonical(out), m.toarray())


def test_rps_degree_sequence_without_noise_is_the_true_sequence(karate):
    """Noise-free RPS: balanced cuts, exact leaf counts, lower-bound summaries of leaves
    that end narrow (one degree each): the true sorted sequence."""
    for accounting in ("paper", "strict"):
        with noise_off():
            out = get_mechanism("rps_degree_sequence").func(
                karate, epsilon=1.0, accounting=accounting, rng=np.random.default_rng(0))
        assert np.array_equal(out.value.values, np.sort(karate.degrees()))


def test_truncation_without_noise_is_the_truncated_histogram(karate):
    """Truncation at noise-off: the cutoff is theta + ceil(ln|V| / beta) + 1 and the
    release is the exact histogram of T_cutoff(G)."""
    import math

    from privpub.baselines.truncation import truncate, truncation_beta

    epsilon, theta = 1.0, 4
    beta = truncation_beta(epsilon, karate.n_nodes, theta)
    cutoff = theta + math.ceil(math.log(karate.n_nodes) / beta) + 1
    with noise_off():
        out = get_mechanism("truncation").func(karate, epsilon=epsilon, theta=theta,
                                               rng=np.random.default_rng(0))
    expected = np.bincount(truncate(karate, cutoff).degrees()).astype(float)
    got = np.asarray(out.value.counts, dtype=float)
    size = max(expected.size, got.size)
    assert _equal(np.pad(got, (0, size - got.size)), np.pad(expected, (0, size - expected.size)))


def test_priv_topk_without_noise_is_the_true_top_k(karate):
    """Global-sensitivity top-k at noise-off: the k nodes of largest score."""
    with noise_off():
        out = get_mechanism("global_priv_topk").func(karate, epsilon=1.0, k=3,
                                                     rng=np.random.default_rng(0))
    ranked = _canonical(out)
    assert ranked.size == 3
    with noise_off():  # the same k with a tiny budget: still the best k, in the same order
        again = _canonical(get_mechanism("global_priv_topk").func(
            karate, epsilon=1e-6, k=3, rng=np.random.default_rng(5)))
    assert np.array_equal(ranked, again)


def test_every_intrinsic_reason_is_stated():
    for name, (reason, params) in INTRINSIC.items():
        assert len(reason) > 40 and params, name
        sig = inspect.signature(get_mechanism(name).func)
        assert set(params) <= set(sig.parameters)


def test_rps_noise_free_cut_is_the_best_cut_not_the_widest_group():
    """The exponential mechanism's best candidate is the best *cut*: with the noise off,
    RPS cuts at the most balanced place even when a wide empty gap holds many more
    (equally poor) cuts, which the finite-epsilon mode (quality + log group size) prefers."""
    from privpub.mechanisms.rps import BoxPartition, BoxRegion, CountBalance, Node

    values = np.array([0.0] * 10 + [100.0] * 10)
    part = BoxPartition([values], [True], quality=CountBalance(), domain_lo=[0.0],
                        domain_hi=[100000.0])
    node = Node(np.arange(20), BoxRegion(np.array([0.0]), np.array([100000.0])), 0, "")
    with noise_off():
        split = part(node, epsilon=0.01, rng=np.random.default_rng(0), ledger=None)
    assert split.left_rows.size == 10  # between the two clusters
    assert split.left_region.hi[0] == 0  # the lowest cut of that group (ties: lowest)


def test_a_noise_free_tree_beyond_the_node_cap_is_skipped_not_failed():
    """A noise-free twin whose tree cannot be built within the node cap (exact stop checks
    never end a region of one row) is a cell that cannot apply, not a failure."""
    from privpub.errors import NotApplicableError, PrivpubError
    from privpub.mechanisms.rps import BoxPartition, BoxRegion, CountBalance, NoisyCountStop, rps

    values = np.arange(200, dtype=float)
    part = BoxPartition([values], [True], quality=CountBalance(), domain_lo=[0.0],
                        domain_hi=[199.0])
    kwargs = dict(partition=part, summarize=lambda node, **_: node.rows.size,
                  stopping=NoisyCountStop(0), epsilon=1.0, depth=20, max_nodes=4)
    region = BoxRegion(np.array([0.0]), np.array([199.0]))
    with noise_off(), pytest.raises(NotApplicableError, match="noise-free"):
        rps(200, region, rng=np.random.default_rng(0), **kwargs)
    with pytest.raises(PrivpubError) as info:
        rps(200, region, rng=np.random.default_rng(0), **kwargs)
    assert not isinstance(info.value, NotApplicableError)
