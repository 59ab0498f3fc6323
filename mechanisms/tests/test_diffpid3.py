"""DiffPID3 (farias2021 Sec 5.2, Algorithms 2-3): utilities, element local sensitivities
(admissibility by brute force), exact DP of the split choice, trees and their ledger."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from mechanisms.diffpid3 import (
    diffpid3,
    f_add,
    gini_element_sensitivity,
    gini_penalty,
    gini_utility,
    global_diffpid3,
    ig_element_sensitivity,
    ig_global_sensitivity,
    ig_penalty,
    information_gain,
    local_diffpid3,
    shifted_local_diffpid3,
)
from privpub.dampening import (
    dampen,
    dampening_penalty,
    local_dampening_probabilities,
    shifted_local_dampening_scores,
)
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.registry import RECORD_DP, get_mechanism
from privpub.types import Attribute, Kind, Schema, Table


# --------------------------------------------------------------------------- helpers
def paper_h(a, b):
    """Lemma 5.5's h with the paper's conventions (g(x) = 0 for x <= 1, f(x) = 0 for x <= 0)."""
    def f(x):
        return 0.0 if x <= 0 else float(f_add(x))

    def g(x):
        return 0.0 if x <= 1 else (x * math.log2((x - 1) / x) - math.log2(x - 1))

    return max(f(a) - f(b), g(b) - g(a))


def literal_candidates(a, b, t, tau=None):
    """Algorithm 3 as printed (``tau`` = the paper's cap on additions, None = no cap)."""
    cands = {(a, b)}
    for _ in range(t):
        nxt = set()
        for x, y in cands:
            if x > 0 and y > 0:
                nxt.add((x - 1, y - 1))
            if tau is None or x < tau:
                nxt.add((x + 1, y))
        cands = nxt
    return cands


def literal_ls(counts, t, tau=None):
    """Lemma 5.6 with the literal Candidates algorithm."""
    counts = np.asarray(counts)
    best = 0.0
    for j, c in itertools.product(range(counts.shape[0]), range(counts.shape[1])):
        a, b = int(counts[j].sum()), int(counts[j, c])
        for tt in range(t + 1):
            for x, y in literal_candidates(a, b, tt, tau):
                best = max(best, paper_h(x, y))
    return best


def neighbours(counts):
    """Tables with one record (j, c) added or removed."""
    for j, c in itertools.product(range(counts.shape[0]), range(counts.shape[1])):
        up = counts.copy()
        up[j, c] += 1
        yield up
        if counts[j, c] > 0:
            down = counts.copy()
            down[j, c] -= 1
            yield down


def small_tables(rows=2, cols=2, top=3):
    for cells in itertools.product(range(top + 1), repeat=rows * cols):
        yield np.array(cells, dtype=float).reshape(rows, cols)


def make_table(n, seed, noise=0.1):
    """Class = x0 (flipped with prob noise); x1, x2 are noise; x3 numeric."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(n, 3))
    y = np.where(rng.random(n) < noise, 1 - x[:, 0], x[:, 0])
    df = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "x2": x[:, 2],
                       "x3": rng.uniform(0, 10, n), "y": y})
    schema = Schema((Attribute("x0", "ordinal", (0, 1)), Attribute("x1", "ordinal", (0, 1)),
                     Attribute("x2", "categorical", (0, 1)),
                     Attribute("x3", "numeric", (0.0, 10.0)),
                     Attribute("y", "categorical", (0, 1))), class_attribute="y")
    return Table(df, schema)


# --------------------------------------------------------------------------- utilities
def test_utilities():
    c = np.array([[3, 1], [0, 4], [0, 0]])
    # -tau H(C|A): group 0: 4 * H(3/4), group 1: pure
    h = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert information_gain(c) == pytest.approx(-4 * h)
    assert gini_utility(c) == pytest.approx(-4 * (1 - 0.75**2 - 0.25**2))
    assert information_gain(np.zeros((2, 2))) == 0 == gini_utility(np.zeros((2, 2)))
    assert ig_global_sensitivity(21574) == pytest.approx(math.log2(21575) + 1 / math.log(2))


def test_lemma_5_5_add_and_remove_changes():
    # adding (j, c) changes IG by f(b) - f(a) <= 0, removing by g(a) - g(b): |.| = h's terms
    rng = np.random.default_rng(0)
    for _ in range(50):
        c = rng.integers(0, 9, size=(3, 2)).astype(float)
        for j, k in itertools.product(range(3), range(2)):
            a, b = c[j].sum(), c[j, k]
            up = c.copy()
            up[j, k] += 1
            assert information_gain(c) - information_gain(up) == pytest.approx(
                float(f_add(a) - f_add(b)), abs=1e-9)


@pytest.mark.parametrize("t", [0, 1, 2, 5])
def test_fast_candidates_equal_the_literal_algorithm(t):
    for counts in small_tables(2, 2, 4):
        want = literal_ls(counts, t)
        got = ig_element_sensitivity(counts, [t])[0]
        assert got == pytest.approx(want, abs=1e-9), (counts, t)


def test_ig_sensitivity_is_admissible_by_brute_force():
    """Condition (1) against the actual IG changes, condition (2) for t <= 3, on every
    2-value x 2-class table with cells <= 4 (625 tables) and all their neighbours."""
    worst = 0.0
    for counts in small_tables(2, 2, 4):
        d = ig_element_sensitivity(counts, np.arange(5))
        u = information_gain(counts)
        for nb in neighbours(counts):
            change = abs(information_gain(nb) - u)
            assert change <= d[0] + 1e-9
            worst = max(worst, change / max(d[0], 1e-12))
            dn = ig_element_sensitivity(nb, np.arange(4))
            assert (d[1:] >= dn - 1e-9).all()
    assert worst > 0.99  # Lemma 5.5 is tight


def test_the_papers_cap_on_additions_is_not_admissible():
    # Algorithm 3 only adds a record while a < tau; with tau the table size, condition (2)
    # delta(x, t + 1) >= delta(y, t) fails: x = two records (j=1, c=1), y = x plus one more.
    x = np.array([[0.0, 0.0], [0.0, 2.0]])
    y = np.array([[0.0, 0.0], [0.0, 3.0]])
    capped_x1 = literal_ls(x, 1, tau=int(x.sum()))
    capped_y0 = literal_ls(y, 0, tau=int(y.sum()))
    assert capped_x1 == pytest.approx(2.7548875) and capped_y0 == pytest.approx(3.2451125)
    assert ig_element_sensitivity(x, [1])[0] >= ig_element_sensitivity(y, [0])[0]
    # and on the empty table it cannot add at all: delta(x, 1) = 0 < 2 = delta(x + r, 0)
    assert literal_ls(np.zeros((2, 2)), 1, tau=0) == 0


def test_gini_sensitivity_is_admissible_by_brute_force():
    for rows, cols in [(2, 2), (1, 3)]:
        for counts in small_tables(rows, cols, 3):
            d = gini_element_sensitivity(counts, np.arange(4))
            u = gini_utility(counts)
            for nb in neighbours(counts):
                assert abs(gini_utility(nb) - u) <= d[0] + 1e-12
                assert (d[1:] >= gini_element_sensitivity(nb, np.arange(3)) - 1e-12).all()
            assert d.max() < 2  # below the global sensitivity


@pytest.mark.parametrize("seed", range(4))
def test_ig_penalty_closed_form(seed):
    rng = np.random.default_rng(seed)
    for _ in range(8):
        counts = rng.integers(0, 30, size=(int(rng.integers(1, 4)), 2)).astype(float)
        big = ig_global_sensitivity(int(counts.sum()) + int(rng.integers(0, 60)))
        want = dampening_penalty(
            lambda ts, c=counts: ig_element_sensitivity(c, ts)[:, None], 1,
            global_sensitivity=big,
        )[0]
        assert ig_penalty(counts, big) == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_gini_penalty_is_the_limit_of_the_differences():
    a, b = np.array([[7.0, 1.0]]), np.array([[30.0, 2.0], [1.0, 0.0]])
    ts = np.arange(2_000_000)
    diff = np.sum(gini_element_sensitivity(b, ts) - gini_element_sensitivity(a, ts))
    # the sum is cut at T = 2e6: its tail is about 2 (31 - 8) / T = 2.3e-5
    assert gini_penalty(a) - gini_penalty(b) == pytest.approx(diff + 2 * 23 / 2e6, abs=1e-6)


@pytest.mark.parametrize("criterion", ["ig", "gini"])
@pytest.mark.parametrize("variant", ["local", "shifted"])
def test_split_choice_is_exactly_epsilon_dp(criterion, variant):
    """The split selection on two binary attributes (records in 8 cells): the log-ratio of
    the selection probabilities between every table and its 16 neighbours is <= eps."""
    eps, n_public = 1.0, 200
    big = ig_global_sensitivity(n_public) if criterion == "ig" else 2.0
    util = information_gain if criterion == "ig" else gini_utility
    rng = np.random.default_rng(1)
    tables = [np.array(c, dtype=float).reshape(2, 2, 2)
              for c in itertools.product(range(2), repeat=8)]
    tables += [rng.integers(0, 12, size=(2, 2, 2)).astype(float) for _ in range(40)]

    memo = {}

    def logp(cube):  # cube[a0, a1, class]
        key = cube.tobytes()
        if key not in memo:
            memo[key] = _logp(cube)
        return memo[key]

    def _logp(cube):
        conts = [cube.sum(axis=1), cube.sum(axis=0)]
        u = np.array([util(c) for c in conts])
        if variant == "local":
            sens = ig_element_sensitivity if criterion == "ig" else gini_element_sensitivity
            d = dampen(u, lambda ts: np.stack([sens(c, ts) for c in conts], axis=1),
                       global_sensitivity=big)
        else:
            pen = np.array([ig_penalty(c, big) if criterion == "ig" else gini_penalty(c)
                            for c in conts])
            d = shifted_local_dampening_scores(u, pen, global_sensitivity=big)
        return np.log(local_dampening_probabilities(d, epsilon=eps))

    worst = 0.0
    for cube in tables:
        lp = logp(cube)
        for idx in itertools.product(range(2), repeat=3):
            for step in (1, -1):
                nb = cube.copy()
                nb[idx] += step
                if nb[idx] < 0:
                    continue
                worst = max(worst, np.abs(lp - logp(nb)).max())
    assert 0.2 * eps < worst <= eps + 1e-9


# --------------------------------------------------------------------------- trees
def test_registration():
    for name, role in [("global_diffpid3", "baseline"), ("local_diffpid3", "mechanism"),
                       ("shifted_local_diffpid3", "mechanism")]:
        info = get_mechanism(name)
        assert (info.input_kind, info.output_kind, info.privacy, info.paper, info.role) == (
            Kind.TABLE, Kind.CLASSIFIER, RECORD_DP, "farias2021", role)
        assert set(info.parameters) == {"epsilon", "depth", "criterion", "n_bins"}
        assert info.caveat_for({}) is not None and info.caveat_for({"criterion": "gini"}) is None


@pytest.mark.parametrize("mech", [global_diffpid3, local_diffpid3, shifted_local_diffpid3])
@pytest.mark.parametrize("criterion", ["ig", "gini"])
def test_tree_learns_and_spends_its_budget(mech, criterion):
    table = make_table(3000, seed=1)
    ledger = PrivacyLedger(5.0)
    tree = mech(table, epsilon=5.0, depth=2, criterion=criterion,
                rng=np.random.default_rng(2), ledger=ledger)
    assert tree.attribute[0] == 0  # x0 is the informative attribute
    pred = tree.predict(table)
    assert np.mean(pred == table.data["y"].to_numpy()) > 0.85
    assert ledger.spent == pytest.approx(5.0)
    assert len(ledger.entries) < 30  # compact: one profile per depth
    assert tree.depth <= 2 and tree.info["n_nodes"] == tree.n_nodes
    again = tree.refit(make_table(500, seed=3), rng=np.random.default_rng(0))
    assert again.params == tree.params and again is not tree


def test_depth_zero_and_stopping():
    table = make_table(200, seed=0)
    tree = diffpid3(table, epsilon=1.0, depth=0, rng=np.random.default_rng(0))
    assert tree.n_nodes == 1 and tree.attribute[0] == -1
    # a tiny budget stops at the root (noisy count test of Algorithm 2, line 7) most times
    small = [diffpid3(make_table(20, seed=s), epsilon=1e-3, depth=3,
                      rng=np.random.default_rng(s)).n_nodes for s in range(10)]
    assert min(small) == 1


def test_ledger_paths_never_exceed_epsilon():
    table = make_table(2000, seed=4)
    ledger = PrivacyLedger(1.0)
    diffpid3(table, epsilon=1.0, depth=3, variant="shifted", rng=np.random.default_rng(1),
             ledger=ledger)
    per_depth = [e for e in ledger.entries if e.primitive == "parallel"]
    assert len(per_depth) == 4
    assert sum(e.epsilon for e in per_depth) == pytest.approx(1.0)
    assert all(e.epsilon <= 2 * 1.0 / (2 * 4) + 1e-12 for e in per_depth)


def test_numeric_attributes_are_binned_on_the_public_domain():
    table = make_table(100, seed=0)
    tree = diffpid3(table, epsilon=1.0, depth=1, n_bins=4, rng=np.random.default_rng(0))
    x, _ = tree.encoder.encode(table)
    expected = np.clip(np.floor(table.data["x3"].to_numpy() / 10 * 4), 0, 3)
    np.testing.assert_array_equal(x[:, 3], expected)
    assert tree.encoder.sizes == (2, 2, 2, 4)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -1}, "epsilon"),
        ({"epsilon": 1, "depth": -1}, "depth"),
        ({"epsilon": 1, "criterion": "entropy"}, "criterion"),
        ({"epsilon": 1, "variant": "best"}, "variant"),
        ({"epsilon": 1, "n_bins": 0}, "n_bins"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(PrivpubError, match=match):
        diffpid3(make_table(50, seed=0), rng=np.random.default_rng(0), **kwargs)


def test_bad_tables():
    t = make_table(50, seed=0)
    no_class = Table(t.data, Schema(t.schema.attributes))
    with pytest.raises(PrivpubError, match="class"):
        diffpid3(no_class, epsilon=1, rng=0)
    with pytest.raises(PrivpubError, match="Table"):
        diffpid3(t.data, epsilon=1, rng=0)
    bad = t.data.copy()
    bad.loc[0, "x2"] = 7
    with pytest.raises(PrivpubError, match="outside"):
        diffpid3(Table(bad, t.schema), epsilon=1, rng=0)
