"""AIM and MST on private-pgm: accounting, reproducibility, noise-free limits, bad input."""

import builtins
import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest

pytest.importorskip("mbi")  # JAX too: its log handlers are re-pointed by import_mbi
private_pgm_module = pytest.importorskip("privpub.mechanisms.private_pgm")
private_pgm_module.import_mbi()

from privpub.algorithms.encoding import MarginalDomain  # noqa: E402
from privpub.errors import NotApplicableError, PrivpubError  # noqa: E402
from privpub.ledger import PrivacyLedger, ZCDPBudget, zcdp_delta, zcdp_rho  # noqa: E402
from privpub.mechanisms import private_pgm  # noqa: E402
from privpub.mechanisms.private_pgm import _workload_candidates, aim, mst  # noqa: E402
from privpub.noise import noise_off  # noqa: E402
from privpub.registry import (  # noqa: E402
    RECORD_APPROX_DP,
    RECORD_DP,  # noqa: E402
    get_mechanism,
    neighbour_notion,
)
from privpub.types import Attribute, Schema, Table  # noqa: E402


def _table(n=600, seed=0):
    """Four binary attributes: b copies a (90%), c copies b (80%), d independent."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.9, a, 1 - a)
    c = np.where(rng.random(n) < 0.8, b, 1 - b)
    d = rng.integers(0, 2, n)
    schema = Schema(tuple(Attribute(x, "ordinal", (0, 1)) for x in "abcd"))
    return Table(pd.DataFrame({"a": a, "b": b, "c": c, "d": d}), schema)


# --------------------------------------------------------------------------- accounting
def test_zcdp_conversion_matches_the_authors_values():
    # private-pgm's cdp2adp.cdp_rho(eps, 1e-9) gives these (computed with their code)
    for eps, rho in ((0.1, 0.00017713844718502086), (1.0, 0.014973057673588523),
                     (10.0, 1.0907857043970155)):
        assert zcdp_rho(eps, 1e-9) == pytest.approx(rho, rel=1e-9)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-9), (1.0, 1e-6), (5.0, 1e-3)])
def test_zcdp_rho_is_the_largest_rho_meeting_delta(eps, delta):
    rho = zcdp_rho(eps, delta)
    assert zcdp_delta(rho, eps) <= delta
    assert zcdp_delta(rho * 1.001, eps) > delta


def test_zcdp_budget_refuses_to_overspend_and_fills_the_ledger():
    ledger = PrivacyLedger(1.0)
    budget = ZCDPBudget(ledger, 1e-9)
    budget.spend(budget.rho / 4, label="a")
    budget.spend(budget.rho * 3 / 4, label="b")
    assert ledger.spent == pytest.approx(1.0)
    with pytest.raises(PrivpubError):
        budget.spend(budget.rho / 100, label="c")


@pytest.mark.parametrize("name", ["aim", "mst"])
def test_every_part_of_rho_is_on_the_ledger(name):
    ledger = PrivacyLedger(1.0)
    kw = {"max_iters": 50} | ({"max_model_size": 1.0} if name == "aim" else {})
    out = get_mechanism(name).func(_table(), epsilon=1.0, rng=np.random.default_rng(0),
                                    ledger=ledger, **kw)
    assert ledger.spent == pytest.approx(1.0, rel=1e-9)
    assert all("zCDP rho=" in e.label for e in ledger.entries)
    rho = sum(float(e.label.rsplit("rho=", 1)[1].rstrip(")")) for e in ledger.entries)
    assert rho == pytest.approx(out.info["rho"], rel=1e-3)
    assert out.value.schema == _table().schema


def test_registered_as_approximate_record_dp():
    for name in ("aim", "mst"):
        assert get_mechanism(name).privacy == RECORD_APPROX_DP
    assert neighbour_notion(RECORD_APPROX_DP) == RECORD_DP


def test_aim_quality_sensitivity_is_the_weight():
    """Adding or removing one record moves a marginal's count vector by one cell, so
    ``w (||x - xhat||_1 - bias)`` moves by at most ``w``: brute force over every record of
    a small table and every candidate clique."""
    t = _table(40, seed=3)
    dom = MarginalDomain.from_table(t)
    codes = dom.encode(t)
    cands = _workload_candidates(list(itertools.combinations(range(4), 3)))
    rng = np.random.default_rng(1)
    for cl, w in cands.items():
        size = 2 ** len(cl)
        xhat = rng.random(size) * 10

        def quality(rows, cl=cl, w=w, xhat=xhat, size=size):
            idx = np.ravel_multi_index([rows[:, j] for j in cl], [2] * len(cl))
            return w * np.abs(np.bincount(idx, minlength=size) - xhat).sum()

        q = quality(codes)
        for i in range(len(codes)):
            assert abs(quality(np.delete(codes, i, axis=0)) - q) <= w + 1e-9
        for extra in itertools.product((0, 1), repeat=4):
            assert abs(quality(np.vstack([codes, extra])) - q) <= w + 1e-9


# --------------------------------------------------------------------------- behaviour
def test_same_seed_same_release_and_seeds_differ():
    t = _table()
    one = mst(t, epsilon=1.0, rng=np.random.default_rng(5), max_iters=50).value.data
    two = mst(t, epsilon=1.0, rng=np.random.default_rng(5), max_iters=50).value.data
    other = mst(t, epsilon=1.0, rng=np.random.default_rng(6), max_iters=50).value.data
    pd.testing.assert_frame_equal(one, two)
    assert not one.equals(other)


def test_global_numpy_state_is_left_alone():
    np.random.seed(123)  # noqa: NPY002
    expected = np.random.random()  # noqa: NPY002
    np.random.seed(123)  # noqa: NPY002
    mst(_table(), epsilon=1.0, rng=np.random.default_rng(0), max_iters=20)
    assert np.random.random() == expected  # noqa: NPY002


def test_noise_free_mst_picks_the_maximum_spanning_tree():
    """Without noise MST's tree is the maximum spanning tree of the 2-way marginals' L1
    errors under the independent 1-way model, here the chain a-b-c plus d's best edge."""
    t = _table(2000, seed=2)
    x = t.data.to_numpy()
    n = len(x)
    g = nx.Graph()
    for i, j in itertools.combinations(range(4), 2):
        joint = np.bincount(2 * x[:, i] + x[:, j], minlength=4)
        prod = np.outer(np.bincount(x[:, i], minlength=2), np.bincount(x[:, j], minlength=2))
        g.add_edge("abcd"[i], "abcd"[j], weight=np.abs(joint - prod.ravel() / n).sum())
    best = {frozenset(e) for e in nx.maximum_spanning_tree(g).edges}
    with noise_off():
        out = mst(t, epsilon=1.0, rng=np.random.default_rng(0), max_iters=200)
    assert {frozenset(e) for e in out.info["tree"]} == best
    assert {frozenset("ab"), frozenset("bc")} <= best


def test_strong_dependency_survives_at_large_epsilon():
    t = _table(3000, seed=4)
    out = aim(t, epsilon=20.0, rng=np.random.default_rng(0), max_iters=200,
              max_model_size=1.0)
    rel = out.value.data
    assert (rel["a"] == rel["b"]).mean() > 0.8   # 0.9 in the input; 0.5 if lost


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw,match", [
    ({"epsilon": 0.0}, "epsilon"), ({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"),
    ({"n_bins": 0}, "n_bins"), ({"max_iters": 0}, "max_iters"),
])
def test_bad_input_is_one_clear_error(kw, match):
    params = {"epsilon": 1.0} | kw
    with pytest.raises(PrivpubError, match=match):
        mst(_table(50), rng=np.random.default_rng(0), **params)


def test_missing_library_names_the_extra(monkeypatch):
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "mbi" or name.startswith("mbi."):
            raise ImportError("No module named 'mbi'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(NotApplicableError, match=r"privpub\[synth\]"):
        private_pgm.import_mbi()


def test_a_domain_too_large_is_one_line_before_any_work():
    schema = Schema((Attribute("a", "categorical", tuple(range(6000))),
                     Attribute("b", "categorical", tuple(range(5000))),
                     Attribute("c", "ordinal", (0, 1))))
    t = Table(pd.DataFrame({"a": [0, 1], "b": [2, 3], "c": [0, 1]}), schema)
    with pytest.raises(NotApplicableError, match=r"mst: the domain is too large: the 2-way "
                       r"marginal a \(6000\) x b \(5000\) has 3e\+07 cells"):
        mst(t, epsilon=1.0, rng=np.random.default_rng(0))


def test_a_column_outside_its_domain_is_one_line():
    t = _table(20)
    bad = Table(t.data.assign(a=[2] + [0] * 19), t.schema)
    with pytest.raises(PrivpubError, match="attribute 'a' has values outside its domain"):
        aim(bad, epsilon=1.0, rng=np.random.default_rng(0))


def test_model_marginals_equal_mbis_variable_elimination():
    """The numpy contraction AIM and MST score candidates with gives mbi's own marginals,
    in and out of the model's cliques."""
    mbi = private_pgm.import_mbi()
    dom = mbi.Domain(["a", "b", "c", "d"], [2, 3, 2, 4])
    rng = np.random.default_rng(0)
    ms = [mbi.LinearMeasurement(rng.random(dom.size(cl)) * 10, cl, 1.0)
          for cl in (("a", "b"), ("b", "c"), ("c", "d"), ("a",))]
    model = mbi.estimation.MirrorDescent().estimate(dom, ms, iters=60)
    cliques = [("a", "b"), ("a", "d"), ("d", "b", "a"), ("c",), ("a", "c", "d")]
    got = private_pgm.model_marginals(model, cliques)
    for cl in cliques:
        np.testing.assert_allclose(got[cl], np.asarray(model.project(cl).datavector()),
                                   rtol=1e-9, atol=1e-9)


def test_aim_rounds_must_leave_budget_after_the_one_way_marginals():
    with pytest.raises(PrivpubError, match="rounds must exceed 0.9"):
        aim(_table(50), epsilon=1.0, rounds=3, rng=np.random.default_rng(0))
