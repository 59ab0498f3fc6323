"""DiffPID3 (farias2021 Sec 5.2, Algorithms 2-3): utilities, element local sensitivities
(admissibility by brute force), exact DP of the split choice, trees and their ledger; the
compiled split choice against the plain numpy reference it replaced, bit for bit."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import xlogy

from privpub.algorithms.dampening import (
    dampen,
    dampening_penalty,
    local_dampening,
    local_dampening_probabilities,
    shifted_local_dampening,
    shifted_local_dampening_scores,
)
from privpub.algorithms.encoding import EncodedTable, TableEncoder, domain_codes
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms import diffpid3 as dp3
from privpub.mechanisms.diffpid3 import (
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
from privpub.noise import exponential_mechanism, laplace_mechanism, noise_off
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


# --------------------------------------------------------------------------- the reference
# The split choice as it was before it was compiled (numpy on one contingency table at a
# time, privpub.algorithms.dampening.dampen on a delta callable, a per-node ledger): the compiled
# kernels must give the same bits, hence the same random draws, trees and ledgers.
def ref_xlogx(size):
    k = np.arange(size, dtype=np.float64)
    return xlogy(k, k) / math.log(2.0)


def ref_pair_terms(a, b, t):
    """max over the candidates of h, for each (t, pair): a, b of shape (P,), t of shape (T,)."""
    a = np.asarray(a, dtype=np.int64)[None, :]
    b = np.asarray(b, dtype=np.int64)[None, :]
    t = np.asarray(t, dtype=np.int64)[:, None]
    table = ref_xlogx(int(a.max(initial=0)) + int(t.max(initial=0)) + 3)

    def f(x):
        x = np.maximum(x, 0)
        return np.where(x > 0, table[x + 1] - table[x], 0.0)

    m = np.minimum(t, b)
    best = np.maximum(f(a + t) - f(b), f(a + t - 2 * m) - f(b - m))
    mm = np.minimum(t, b - 1)
    rem = np.maximum(f(a - 1 + t) - f(b - 1), f(a - 1 + t - 2 * mm) - f(b - 1 - mm))
    return np.where(b >= 1, np.maximum(best, rem), best)


def ref_pairs(counts):
    c = np.asarray(counts, dtype=np.float64)
    return np.repeat(c.sum(axis=1), c.shape[1]), c.ravel()


def ref_ig_sensitivity(counts, ts):
    a, b = ref_pairs(counts)
    return ref_pair_terms(a, b, np.atleast_1d(ts)).max(axis=1)


def ref_ig_penalty(counts, bound):
    """ig_penalty as it was: the distances t < max b one by one, then the tail in closed form
    (f_add and k log2 k by scipy, a binary search for the end)."""
    a, b = ref_pairs(counts)
    alpha = float(np.max(np.where(b == 0, a, a - 2 * b + 1)))
    t = int(b.max())
    pen = 0.0
    for d in ref_pair_terms(a, b, np.arange(t)).max(axis=1) if t else []:
        if d >= bound:
            return pen
        pen += bound - d
    while True:
        tail = f_add(t + alpha)
        add0 = f_add(t + a) - f_add(b)
        rem0 = np.where(b >= 1, f_add(t + a - 1) - f_add(b - 1), -np.inf)
        if tail >= bound or (np.all(add0 <= tail) and np.all(rem0 <= tail)):
            break
        delta = ref_pair_terms(a, b, np.arange(t, t + 64)).max(axis=1)
        reached = np.flatnonzero(delta >= bound)
        stop = reached[0] if reached.size else 64
        pen += float(np.sum(bound - delta[:stop]))
        if reached.size:
            return pen
        t += 64
    hi = max(t + alpha, 1.0)
    while f_add(hi) < bound:
        hi *= 2
    lo_i, hi_i = max(math.ceil(t + alpha), 0), math.ceil(hi)
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if f_add(mid) >= bound:
            hi_i = mid
        else:
            lo_i = mid + 1
    t_end = max(int(hi_i - alpha), t)

    def phi(k):
        k = max(k, 0.0)
        return xlogy(k, k) / math.log(2.0)

    return pen + ((t_end - t) * bound - float(phi(t_end + alpha) - phi(t + alpha)))


class ReferenceBuilder(dp3._Builder):
    """Algorithm 2 with the split choice and the ledger as before the compiled kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.node_ledgers = []

    def select(self, rows, attrs, ledger):
        tables = [np.bincount(self.x[rows, a] * self.C + self.y[rows],
                              minlength=self.sizes[a] * self.C).reshape(self.sizes[a], self.C)
                  for a in attrs]
        util = information_gain if self.criterion == "ig" else gini_utility
        u = np.array([util(c) for c in tables])
        g = self.delta_global
        if self.variant == "global":
            i = exponential_mechanism(u, sensitivity=g, epsilon=self.eps, rng=self.rng,
                                      ledger=ledger, label="split attribute (exponential)")
        elif self.variant == "local":
            sens = ref_ig_sensitivity if self.criterion == "ig" else gini_element_sensitivity
            d = dampen(u, lambda ts: np.stack([sens(c, ts) for c in tables], axis=1),
                       global_sensitivity=g)
            i = local_dampening(d, epsilon=self.eps, rng=self.rng, ledger=ledger,
                                label="split attribute (local dampening)")
        else:
            pen = np.array([ref_ig_penalty(c, g) if self.criterion == "ig" else gini_penalty(c)
                            for c in tables])
            i = shifted_local_dampening(u, penalty=pen, global_sensitivity=g, epsilon=self.eps,
                                        rng=self.rng, ledger=ledger,
                                        label="split attribute (shifted local dampening)")
        return attrs[i]

    def build(self, rows, attrs, depth, level, t=None):
        node = self._new()
        ledger = PrivacyLedger(2 * self.eps)
        self.node_ledgers.append((level, ledger))
        noisy_n = float(laplace_mechanism(rows.size, sensitivity=1.0, epsilon=self.eps,
                                          rng=self.rng, ledger=ledger, label="noisy count"))
        t = max((self.sizes[a] for a in attrs), default=1)
        if not attrs or depth == 0 or noisy_n / (t * self.C) < dp3._STOP:
            counts = np.bincount(self.y[rows], minlength=self.C)
            noisy = laplace_mechanism(counts, sensitivity=1.0, epsilon=self.eps, rng=self.rng,
                                      ledger=ledger, label="class counts")
            self.label[node] = int(np.argmax(noisy))
            return node
        attr = self.select(rows, attrs, ledger)
        self.attribute[node] = attr
        values = self.x[rows, attr]
        order = np.argsort(values, kind="stable")
        bounds = np.searchsorted(values[order], np.arange(self.sizes[attr] + 1))
        rest = [a for a in attrs if a != attr]
        self.children[node] = [
            self.build(rows[order[bounds[v]: bounds[v + 1]]], rest, depth - 1, level + 1)
            for v in range(self.sizes[attr])
        ]
        return node

    def old_profiles(self):
        levels = {}
        for level, nl in self.node_ledgers:
            key = tuple((e.label, e.epsilon, e.sensitivity, e.primitive) for e in nl.entries)
            prof = levels.setdefault(level, {})
            prof[key] = prof.get(key, 0) + 1
        return levels


def reference_diffpid3(table, *, epsilon, depth, criterion, variant, rng, n_bins=5):
    encoder = TableEncoder.from_schema(table.schema, n_bins)
    x = np.column_stack([
        pd.Index(list(dom)).get_indexer(np.asarray(table.data[name].to_numpy(), dtype=object))
        if kind != "numeric" else encoder.encode(table)[0][:, i]
        for i, (name, kind, dom) in enumerate(
            zip(encoder.features, encoder.kinds, encoder.domains, strict=True))
    ]).astype(np.int64)
    y = pd.Index(list(encoder.classes)).get_indexer(
        np.asarray(table.data[encoder.class_attribute].to_numpy(), dtype=object))
    eps_node = epsilon / (2 * (depth + 1))
    builder = ReferenceBuilder(x, y, len(encoder.classes), encoder.sizes, criterion=criterion,
                               variant=variant, eps=eps_node, n_total=max(len(y), 1), rng=rng)
    builder.build(np.arange(len(y)), list(range(len(encoder.features))), depth, 0)
    ledger = PrivacyLedger(epsilon)
    dp3._charge(ledger, builder.old_profiles())
    return dp3._relabel(builder), ledger


def make_rich_table(n, seed):
    """Three classes driven by x0 (7 values) and x2 (numeric), x1 with 12 skewed values (many
    empty at depth), x3 a categorical column whose categories are not in the domain's order."""
    rng = np.random.default_rng(seed)
    x0 = rng.integers(0, 7, n)
    x1 = np.minimum(rng.geometric(0.3, n) - 1, 11)
    x2 = rng.uniform(0, 100, n)
    x3 = rng.choice(["u", "v", "w"], size=n, p=[0.7, 0.2, 0.1])
    score = x0 / 6 + x2 / 100 + rng.normal(0, 0.3, n)
    y = np.where(score < 0.7, "a", np.where(score < 1.3, "b", "c"))
    df = pd.DataFrame({"x0": x0.astype(np.int8), "x1": x1, "x2": x2,
                       "x3": pd.Categorical(x3, categories=["w", "u", "v"]), "y": y})
    schema = Schema((Attribute("x0", "ordinal", tuple(range(7))),
                     Attribute("x1", "ordinal", tuple(range(12))),
                     Attribute("x2", "numeric", (0.0, 100.0)),
                     Attribute("x3", "categorical", ("u", "v", "w")),
                     Attribute("y", "categorical", ("a", "b", "c"))), class_attribute="y")
    return Table(df, schema)


def random_counts(rng, n_tables):
    """Contingency tables of every shape the trees meet: 1-41 values, 1-4 classes, empty
    values and classes, counts up to 5e4."""
    for _ in range(n_tables):
        rows, cols = int(rng.integers(1, 42)), int(rng.integers(1, 5))
        top = int(rng.choice([2, 10, 300, 50_000]))
        c = rng.integers(0, top, size=(rows, cols))
        c[rng.random(c.shape) < rng.choice([0.0, 0.3, 0.8])] = 0
        yield c


# --------------------------------------------------------------------------- compiled = reference
def test_tables_equal_the_scalar_formulas():
    xl, x2, fa = dp3._tables(5000)
    k = np.arange(5000, dtype=np.float64)
    assert np.array_equal(xl[:5000], xlogy(k, k))
    assert np.array_equal(x2[:5000], ref_xlogx(5000))
    assert all(fa[i] == f_add(float(i)) for i in [0, 1, 2, 7, 100, 4096, 4999])
    assert np.array_equal(fa[:5000], f_add(k))


@pytest.mark.parametrize("criterion", ["ig", "gini"])
def test_compiled_utilities_equal_the_formulas(criterion):
    rng = np.random.default_rng(1)
    util = information_gain if criterion == "ig" else gini_utility
    tables = list(random_counts(rng, 300))
    sizes = np.array([c.shape[0] for c in tables])
    for n_classes in {c.shape[1] for c in tables}:
        group = [c for c in tables if c.shape[1] == n_classes]
        counts = np.concatenate([c.ravel() for c in group]).astype(np.int64)
        tj = counts.reshape(-1, n_classes).sum(axis=1)
        size = np.array([c.shape[0] for c in group])
        vlo = np.concatenate([[0], np.cumsum(size)[:-1]])
        got = dp3._utilities(counts, tj, vlo * n_classes, vlo, size, n_classes,
                             criterion == "gini", dp3._tables(int(tj.max()) + 2)[0])
        want = np.array([util(c) for c in group])
        assert np.array_equal(got, want)
    assert sizes.max() > 30


@pytest.mark.parametrize("criterion", ["ig", "gini"])
def test_compiled_dampening_equals_dampen(criterion):
    rng = np.random.default_rng(2)
    tables = [c for c in random_counts(rng, 150) if c.shape[1] == 2 and c.sum() < 200_000]
    counts = np.concatenate([c.ravel() for c in tables]).astype(np.int64)
    tj = counts.reshape(-1, 2).sum(axis=1)
    ends = np.cumsum([c.size for c in tables])
    lo, hi = np.concatenate([[0], ends[:-1]]), ends
    util = information_gain if criterion == "ig" else gini_utility
    u = np.array([util(c) for c in tables])
    m = np.array([c.sum(axis=1).max() for c in tables], dtype=np.float64)
    sens = ref_ig_sensitivity if criterion == "ig" else gini_element_sensitivity

    def delta(ts):
        return np.stack([sens(c, ts) for c in tables], axis=1)

    for n in (int(counts.sum()), 10**6):
        g = ig_global_sensitivity(n) if criterion == "ig" else 2.0
        for v in (u, -u, u / 7):
            got = dp3._dampened_scores(v, criterion == "gini", np.repeat(tj, 2), counts, lo,
                                       hi, m, g)
            assert np.array_equal(got, dampen(v, delta, global_sensitivity=g))


def test_compiled_ig_sensitivity_and_penalty_equal_the_reference():
    rng = np.random.default_rng(3)
    for c in random_counts(rng, 150):
        if c.sum() > 20_000:
            c = c // 10
        ts = np.arange(0, 3 * int(c.max()) + 5, 3)
        assert np.array_equal(ig_element_sensitivity(c, ts), ref_ig_sensitivity(c, ts))
        for n in (int(c.sum()), int(c.sum()) + int(rng.integers(1, 10_000))):
            g = ig_global_sensitivity(max(n, 1))
            assert ig_penalty(c, g) == ref_ig_penalty(c, g)


def test_penalty_continuation_agrees_with_the_closed_form():
    """The continuation beyond max b (64 distances at a time; no table met needs it) gives
    the same sum up to rounding."""
    rng = np.random.default_rng(4)
    for c in random_counts(rng, 60):
        a, b = dp3._pairs(c)
        g = ig_global_sensitivity(int(c.sum()) + int(rng.integers(0, 500)))
        _, xlogx, _ = dp3._tables(int(a.max()) + int(b.max()) + 3)
        pen, hit = dp3._ig_penalty_prefix(a, b, g, int(b.max()), xlogx)
        if hit < 0:
            assert dp3._ig_penalty_continue(a, b, g, int(b.max()), pen) == pytest.approx(
                ig_penalty(c, g), rel=1e-12)


@pytest.mark.parametrize("variant", ["global", "local", "shifted"])
@pytest.mark.parametrize("criterion", ["ig", "gini"])
def test_trees_and_ledgers_equal_the_reference(variant, criterion):
    """Same seed, same random draws: the same tree, split by split, and the same ledger."""
    cases = [(make_table(3000, seed=1), 5.0, 3), (make_rich_table(4000, 2), 0.3, 4),
             (make_rich_table(3000, 5), 20.0, 3), (make_rich_table(300, 3), 0.05, 4)]
    sizes = []
    for k, (table, eps, depth) in enumerate(cases):
        ledger = PrivacyLedger(eps)
        tree = diffpid3(table, epsilon=eps, depth=depth, criterion=criterion, variant=variant,
                        rng=np.random.default_rng(k), ledger=ledger)
        (attribute, first, label), ref_ledger = reference_diffpid3(
            table, epsilon=eps, depth=depth, criterion=criterion, variant=variant,
            rng=np.random.default_rng(k))
        assert np.array_equal(tree.attribute, attribute)
        assert np.array_equal(tree.first_child, first)
        assert np.array_equal(tree.label, label)
        assert ledger.to_json() == ref_ledger.to_json()
        sizes.append(tree.n_nodes)
    assert max(sizes) > 50


def test_noise_free_trees_equal_the_reference():
    table = make_rich_table(2000, 7)
    for variant in ("local", "shifted"):
        with noise_off():
            tree = diffpid3(table, epsilon=1.0, depth=3, variant=variant,
                            rng=np.random.default_rng(0))
            (attribute, _, label), _ = reference_diffpid3(
                table, epsilon=1.0, depth=3, criterion="ig", variant=variant,
                rng=np.random.default_rng(0))
        assert np.array_equal(tree.attribute, attribute) and np.array_equal(tree.label, label)


# computed by the code before the compiled kernels (number of nodes, sum of the split
# attributes + 1, sum of the leaf labels of a depth-4 tree with epsilon = 1 on
# make_rich_table(5000, 11), rng seed 3)
PINNED = {
    ("global", "ig"): (936, 546, 783),
    ("global", "gini"): (974, 579, 796),
    ("local", "ig"): (985, 620, 807),
    ("local", "gini"): (985, 620, 794),
    ("shifted", "ig"): (932, 448, 822),
    ("shifted", "gini"): (985, 620, 794),
}


@pytest.mark.parametrize("variant", ["global", "local", "shifted"])
@pytest.mark.parametrize("criterion", ["ig", "gini"])
def test_trees_pinned_from_before(variant, criterion):
    tree = diffpid3(make_rich_table(5000, 11), epsilon=1.0, depth=4, criterion=criterion,
                    variant=variant, rng=np.random.default_rng(3))
    inner = tree.attribute >= 0
    got = (tree.n_nodes, int((tree.attribute[inner] + 1).sum()),
           int(tree.label[~inner].sum()))
    assert got == PINNED[(variant, criterion)]


def test_encoding_equals_the_per_value_lookup():
    table = make_rich_table(500, 0)
    df = table.data.copy()
    df["x3"] = df["x3"].astype(object)
    enc = TableEncoder.from_schema(table.schema, 5)
    x, y = enc.encode(table)
    x_obj, y_obj = enc.encode(Table(df, table.schema))
    assert np.array_equal(x, x_obj) and np.array_equal(y, y_obj)
    for name, dom in [("x0", tuple(range(7))), ("x1", tuple(range(12))), ("x3", ("u", "v", "w"))]:
        want = pd.Index(list(dom)).get_indexer(np.asarray(df[name].to_numpy(), dtype=object))
        assert np.array_equal(domain_codes(table.data[name], dom), want)
    # values outside the domain (a category, an integer) and missing categories
    bad = table.data.copy()
    bad["x3"] = bad["x3"].cat.add_categories(["z"])
    bad.loc[3, "x3"] = "z"
    bad.loc[4, "x3"] = np.nan
    assert list(domain_codes(bad["x3"], ("u", "v", "w"))[3:5]) == [-1, -1]
    assert domain_codes(pd.Series([0, 3, -2, 99]), (0, 1, 2, 3)).tolist() == [0, 3, -1, -1]
    with pytest.raises(PrivpubError, match="outside"):
        enc.encode(Table(bad, table.schema))


def test_encoded_tables_give_the_same_trees_and_predictions():
    table = make_rich_table(3000, 4)
    tree = diffpid3(table, epsilon=2.0, depth=3, variant="local", rng=np.random.default_rng(0))
    encoded = tree.encode_table(table)
    rows = np.random.default_rng(1).permutation(3000)[:2000]
    sub = Table(table.data.iloc[rows].reset_index(drop=True), table.schema)
    assert np.array_equal(encoded.take(rows).x, tree.encoder.encode(sub)[0])
    a = tree.refit(sub, rng=np.random.default_rng(5))
    b = tree.refit(encoded.take(rows), rng=np.random.default_rng(5))
    assert np.array_equal(a.attribute, b.attribute) and np.array_equal(a.label, b.label)
    assert np.array_equal(a.predict(table), b.predict(encoded))
    assert isinstance(encoded, EncodedTable) and encoded.n_rows == 3000
    with pytest.raises(PrivpubError, match="bins"):
        diffpid3(encoded, epsilon=1.0, n_bins=3, rng=0)
    other = TableEncoder.from_schema(table.schema, 3)
    with pytest.raises(PrivpubError, match="encoded"):
        tree.predict(EncodedTable(other, *other.encode(table)))


# --------------------------------------------------------------------------- batched nodes
def test_partition_equals_a_stable_argsort():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n, size, C = int(rng.integers(0, 300)), int(rng.integers(1, 9)), int(rng.integers(1, 4))
        x = rng.integers(0, size, size=(n, 3))
        y = rng.integers(0, C, size=n)
        rows = np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False))
        attr = int(rng.integers(0, 3))
        got_rows, got_bounds, got_cls = dp3._partition(x, y, rows, attr, size, C)
        values = x[rows, attr]
        order = np.argsort(values, kind="stable")
        assert np.array_equal(got_rows, rows[order])
        assert np.array_equal(got_bounds, np.searchsorted(values[order], np.arange(size + 1)))
        for v in range(size):
            part = got_rows[got_bounds[v]:got_bounds[v + 1]]
            assert np.array_equal(got_cls[v], np.bincount(y[part], minlength=C))


@pytest.mark.parametrize("variant", ["global", "local", "shifted"])
@pytest.mark.parametrize("criterion", ["ig", "gini"])
def test_batched_leaves_draw_as_one_node_at_a_time(variant, criterion):
    """Leaves are drawn in batches and the generator wound back at a split
    (:meth:`_Builder._children`): the same tree, ledger and generator state afterwards as
    the reference, node by node, on budgets where leaves and splits (also of empty nodes)
    alternate among siblings."""
    for k, (n, eps, depth) in enumerate([(400, 0.02, 4), (2000, 0.5, 4), (1500, 3.0, 3),
                                         (60, 0.2, 5), (3000, 0.05, 2)]):
        table = make_rich_table(n, 20 + k)
        rng, ref_rng = np.random.default_rng(k), np.random.default_rng(k)
        ledger = PrivacyLedger(eps)
        tree = diffpid3(table, epsilon=eps, depth=depth, criterion=criterion, variant=variant,
                        rng=rng, ledger=ledger)
        (attribute, first, label), ref_ledger = reference_diffpid3(
            table, epsilon=eps, depth=depth, criterion=criterion, variant=variant, rng=ref_rng)
        assert np.array_equal(tree.attribute, attribute)
        assert np.array_equal(tree.first_child, first)
        assert np.array_equal(tree.label, label)
        assert ledger.to_json() == ref_ledger.to_json()
        assert rng.bit_generator.state == ref_rng.bit_generator.state
        assert rng.random() == ref_rng.random()
