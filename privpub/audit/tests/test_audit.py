"""Tests of the privacy audit: known bugs are refuted, correct mechanisms are not,
a weak audit says so, and a witness replays.

The mechanisms under test are registered through the registry's decorator
(:mod:`privpub.audit.tests.plugins`), as a user's plug-in would be, and audited by name.
Sample sizes are small where the violation is gross; the speed targets are measured by
``benchmarks/bench_audit.py``, not here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from privpub.audit import Plan, audit, configurations, replay
from privpub.audit import inputs as audit_inputs
from privpub.audit.configs import call_parameters
from privpub.audit.estimator import epsilon_lower_bound
from privpub.audit.neighbours import NEIGHBOURHOODS, neighbourhood_for
from privpub.audit.pairs import random_pairs, structured_pairs
from privpub.audit.statistics import Columns, release_statistics
from privpub.audit.tests import plugins
from privpub.errors import ConfigError, UnknownNameError
from privpub.registry import get_mechanism, mechanisms
from privpub.testing import clopper_pearson
from privpub.types import Kind, Release

#: Small sample sizes: gross violations, and the many audits of the family-wise error test.
SMALL = Plan(screen=40, measure=300, structured=4, random=2, pairs=1, tests=4, statistics=16)
#: Half the quick mode's measurement: enough for the 2x violations here, at these seeds.
MEDIUM = Plan(screen=100, measure=1000, structured=8, random=4, pairs=1, tests=4, statistics=16)


@pytest.fixture(scope="module", autouse=True)
def toy_mechanisms():
    plugins.register()
    yield
    plugins.unregister()


@pytest.fixture(scope="module")
def halved_laplace() -> dict:
    return audit("toy_audit_laplace", {"epsilon": 1.0, "sensitivity_factor": 0.5},
                 mode=MEDIUM, seed=0)


# --------------------------------------------------------------------------- the six cases
def test_laplace_histogram_with_halved_sensitivity_is_violated(halved_laplace):
    r = halved_laplace
    assert r["verdict"] == "violated"
    assert r["epsilon_lower_bound"] > 1.0 and r["confirmation"]["lower_bound"] > 1.0
    assert r["witness"]["statistic"].startswith(("score:", "bin["))


def test_exponential_mechanism_with_halved_sensitivity_is_violated():
    """At epsilon = 2 one edge moves the halved mechanism's log-odds by 4 (a loss of 3.3 on
    the central pair, 1.4 for the correct one): a clear 2x violation."""
    bad = audit("toy_audit_dense_or_sparse", {"epsilon": 2.0, "sensitivity": 0.5},
                mode=MEDIUM, seed=0)
    assert bad["verdict"] == "violated" and bad["epsilon_lower_bound"] > 2.0
    good = audit("toy_audit_dense_or_sparse", {"epsilon": 2.0}, mode=MEDIUM, seed=0)
    assert good["verdict"] != "violated" and good["epsilon_lower_bound"] <= 2.0


def test_node_dp_claim_calibrated_for_edges_is_violated():
    r = audit("toy_audit_node_as_edge", {"epsilon": 1.0}, mode=MEDIUM, seed=0)
    assert r["neighbourhood"] == "node_add_remove"
    assert r["verdict"] == "violated" and r["epsilon_lower_bound"] > 2.0


def test_output_length_revealing_the_maximum_degree_is_violated():
    """The README's example mechanism: right sensitivity, but d_max + 1 bins."""
    r = audit("toy_audit_readme_histogram", {"epsilon": 1.0}, mode=SMALL, seed=0)
    assert r["verdict"] == "violated"
    wit = r["witness"]
    assert wit["statistic"] == "len" or wit["event"].get("values") == ["<absent>"]
    assert wit["counts"]["d"] == wit["counts"]["runs"] and wit["counts"]["d_prime"] == 0


def test_correct_laplace_is_not_violated_in_20_audits():
    """The family-wise error rate holds: 20 independent audits (seeds) of a correct
    mechanism, none violated, every bound at most the claim."""
    results = [audit("toy_audit_laplace", {"epsilon": 1.0}, mode=SMALL, seed=s)
               for s in range(20)]
    assert [r["verdict"] for r in results].count("violated") == 0
    assert max(r["epsilon_lower_bound"] for r in results) <= 1.0


def test_audit_too_weak_for_its_claim_is_inconclusive():
    """Twenty times the noise it needs: nothing is seen at the claim or at twice it, so the
    audit cannot say the claim holds."""
    r = audit("toy_audit_laplace", {"epsilon": 1.0, "noise_factor": 20.0}, mode=MEDIUM,
              seed=0)
    assert r["verdict"] == "inconclusive"
    assert r["power_check"] is not None and not r["power_check"]["passed"]
    assert r["power_check"]["lower_bound"] <= 1.0


def test_correct_laplace_holds_with_enough_runs():
    r = audit("toy_audit_laplace", {"epsilon": 1.0}, mode=MEDIUM, seed=0)
    assert r["verdict"] == "holds"
    assert r["epsilon_lower_bound"] <= 1.0 < r["power_check"]["lower_bound"] <= 2.0


# --------------------------------------------------------------------------- witness, JSON
def test_witness_replays_run_for_run(halved_laplace):
    wit = halved_laplace["witness"]
    doc = json.loads(json.dumps(wit))  # stored as JSON
    again = replay(doc)
    assert again["reproduced"] and again["neighbours"] and again["violated"]
    assert again["lower_bound"] == pytest.approx(wit["lower_bound"])


def test_result_is_json_and_deterministic_given_the_seed(halved_laplace):
    again = audit("toy_audit_laplace", {"epsilon": 1.0, "sensitivity_factor": 0.5},
                  mode=MEDIUM, seed=0)
    timing = ("seconds", "cpu_seconds")
    first = {k: v for k, v in halved_laplace.items() if k not in timing}
    assert json.loads(json.dumps(first)) == {k: v for k, v in again.items() if k not in timing}
    other = audit("toy_audit_laplace", {"epsilon": 1.0, "sensitivity_factor": 0.5},
                  mode=SMALL, seed=1)
    assert other["tests"] != first["tests"]


# --------------------------------------------------------------------------- built-ins
def test_builtin_caveat_confirmed_through_a_published_info_field():
    """Hay et al. with Lambda = the maximum degree publishes Lambda in ``info``: a node
    joined to everyone changes it. Declared a diagnostic, the audit no longer reads it."""
    r = audit("hay_degree_sequence", {"epsilon": 1.0, "degree_bound": "max_degree"},
              mode=SMALL, seed=0)
    assert r["neighbourhood"] == "node_rewire" and r["caveat"]
    assert r["verdict"] == "violated" and "info/degree_bound" in r["info_leaks"]
    quiet = audit("hay_degree_sequence", {"epsilon": 1.0, "degree_bound": "max_degree"},
                  mode=SMALL, seed=0, diagnostics=True)
    assert all(not t["statistic"].startswith("info/") for t in quiet["tests"])


def test_every_builtin_dp_configuration_is_a_valid_call():
    dp = {n: m for n, m in mechanisms().items() if m.is_dp and not n.startswith("toy_")}
    assert len(dp) >= 20
    for info in dp.values():
        configs = configurations(info)
        assert configs and all(c["epsilon"] == 1.0 for c in configs)
        for config in configs:
            call_parameters(info, config)  # raises on unknown or missing parameters
            if callable(info.caveat):
                info.caveat_for(config)


def test_bad_input_gives_one_clear_error():
    with pytest.raises(UnknownNameError):
        audit("no_such_mechanism", {"epsilon": 1.0})
    with pytest.raises(ConfigError, match="not a DP notion"):
        audit("mondrian", {"epsilon": 1.0})
    with pytest.raises(ConfigError, match="epsilon"):
        audit("toy_audit_laplace", {})
    with pytest.raises(ConfigError, match="no parameter"):
        audit("toy_audit_laplace", {"epsilon": 1.0, "bogus": 1})
    with pytest.raises(ConfigError, match="needs"):
        call_parameters(get_mechanism("truncation"), {"epsilon": 1.0})
    with pytest.raises(ConfigError, match="mode"):
        audit("toy_audit_laplace", {"epsilon": 1.0}, mode="slow")


# --------------------------------------------------------------------------- pieces
@pytest.mark.parametrize("name", sorted(NEIGHBOURHOODS))
def test_every_pair_is_a_pair_of_neighbours(name):
    hood = NEIGHBOURHOODS[name]
    sizing = audit_inputs.sizing_for({"theta": 2})
    pairs = structured_pairs(hood, sizing, {"theta": 2})
    pairs += random_pairs(hood, sizing, 12, np.random.default_rng(0))
    assert len(pairs) >= 14
    for p in pairs:
        assert hood.are_neighbours(p.d, p.d_prime), p.name
        assert hood.are_neighbours(p.d_prime, p.d), p.name
        for x in (p.d, p.d_prime):  # the JSON form of a witness round-trips
            doc = audit_inputs.encode_input(x)
            assert audit_inputs.encode_input(audit_inputs.decode_input(doc)) == doc


def test_notions_map_to_the_papers_neighbourhoods():
    assert neighbourhood_for(Kind.GRAPH, "edge-DP").name == "edge_toggle"
    assert neighbourhood_for(Kind.GRAPH, "node-DP").name == "node_add_remove"
    assert neighbourhood_for(Kind.BINARY_MATRIX, "node-DP").name == "row_replace"
    assert neighbourhood_for(Kind.TABLE, "record-DP").name == "record_add_remove"
    assert neighbourhood_for(Kind.GRAPH, "node-DP", "node_rewire").name == "node_rewire"
    with pytest.raises(ConfigError):
        neighbourhood_for(Kind.TABLE, "edge-DP")
    with pytest.raises(ConfigError):
        neighbourhood_for(Kind.TABLE, "record-DP", "node_rewire")


def test_statistics_round_last_bits_and_read_every_info_field():
    a = release_statistics(Release(np.array([0.1 + 0.2, 1.0]), {"theta": 3, "tag": "x"}),
                           Kind.DEGREE_HISTOGRAM)
    hist = [release_statistics(Release(audit_inputs.graph(3).degree_histogram(), {"t": t}),
                               Kind.DEGREE_HISTOGRAM) for t in (0.3, 0.1 + 0.2)]
    cols = Columns(hist)
    assert cols.numeric("info/t")[0] == cols.numeric("info/t")[1]
    assert {"info/theta", "info/tag"} <= set(a)
    assert "info/t" not in release_statistics(Release(np.zeros(1), {"t": 1}),
                                              Kind.DEGREE_HISTOGRAM, diagnostics=("t",))


def test_lower_bound_is_the_clopper_pearson_ratio():
    level = 0.005
    low, _ = clopper_pearson(400, 1000, level)
    _, high = clopper_pearson(50, 1000, level)
    assert epsilon_lower_bound(400, 1000, 50, 1000, level) == pytest.approx(np.log(low / high))
    assert epsilon_lower_bound(10, 1000, 500, 1000, level) == 0.0
