"""Tests of the RPS framework (qardaji2012 Algorithm 1, Sec 3.2, Eq 2-3)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privpub.errors import BudgetExceededError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.rps import (
    BoxPartition,
    BoxRegion,
    ClassBalance,
    CountBalance,
    Node,
    NoisyCountStop,
    PathBudget,
    Split,
    cut_groups,
    cut_probabilities,
    quality_class,
    quality_count,
    rps,
    sample_in_box,
)
from privpub.noise import laplace_mechanism
from privpub.testing import brute_force_sensitivity

TOL = 1e-9


# --------------------------------------------------------------------------- helpers
def box_summary(columns, discrete, mode="uniform"):
    """A leaf summary that draws one point per item inside the leaf box (Laplace count)."""

    def summarize(node, *, epsilon, rng, ledger):
        noisy = laplace_mechanism(float(node.rows.size), sensitivity=1.0, epsilon=epsilon,
                                  rng=rng, ledger=ledger, label="leaf count")
        m = int(np.rint(max(noisy, 0.0)))
        lo = np.tile(node.region.lo, (m, 1))
        hi = np.tile(node.region.hi, (m, 1))
        return sample_in_box(lo, hi, discrete, mode, rng)

    return summarize


def random_box_problem(rng, n=None):
    """Random data on 1-3 axes (discrete and continuous) plus labels."""
    d = int(rng.integers(1, 4))
    n = int(rng.integers(0, 60)) if n is None else n
    discrete = rng.random(d) < 0.5
    hi = np.where(discrete, rng.integers(1, 12, d), rng.uniform(2.0, 15.0, d)).astype(float)
    lo = np.where(discrete, 0.0, -rng.uniform(0.0, 3.0, d))
    cols = []
    for j in range(d):
        if discrete[j]:
            cols.append(rng.integers(0, int(hi[j]) + 1, n).astype(float))
        else:
            cols.append(rng.uniform(lo[j], hi[j], n))
    labels = rng.integers(0, 2, n)
    return cols, discrete, lo, hi, labels


def ledger_paths(ledger: PrivacyLedger) -> dict[str, float]:
    """Per root-to-leaf path spend read from a nested ("full") ledger record: the sum of the
    entries at every ancestor-or-self path of each leaf path."""
    entries = [e for e in ledger.entries if e.primitive != "parallel"]
    paths = {e.path for e in entries}

    def ancestor(a, p):  # a is p or one of its ancestors ("" is the root)
        return a == p or a == "" or p.startswith(a + "/")

    leaves = [p for p in paths if not any(q != p and ancestor(p, q) for q in paths)]

    return {p: sum(e.epsilon for e in entries if ancestor(e.path, p)) for p in leaves}


# --------------------------------------------------------------------------- framework
def test_module_example_and_plugin_interface():
    x = np.array([1, 2, 2, 3, 7, 8, 9, 9])

    class Halve:
        spends = False

        def can_split(self, node):
            lo, hi = node.region
            return hi > lo

        def __call__(self, node, *, epsilon, rng, ledger):
            lo, hi = node.region
            mid = (lo + hi + 1) // 2
            left = x[node.rows] < mid
            return Split(node.rows[left], (lo, mid - 1), node.rows[~left], (mid, hi))

    def count(node, *, epsilon, rng, ledger):
        return laplace_mechanism(node.rows.size, sensitivity=1, epsilon=epsilon, rng=rng,
                                 ledger=ledger, label="leaf count")

    ledger = PrivacyLedger(2.0)
    tree = rps(len(x), (0, 15), partition=Halve(), summarize=count, epsilon=2.0, depth=3,
               rng=np.random.default_rng(1), ledger=ledger)
    assert [leaf.region for leaf in tree.leaves] == [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9),
                                                     (10, 11), (12, 13), (14, 15)]
    assert [leaf.rows.size for leaf in tree.leaves] == [1, 3, 0, 1, 3, 0, 0, 0]
    assert tree.n_nodes == 15 and tree.max_depth == 3
    # nothing spent on the free partition: every leaf gets the whole budget
    assert np.allclose(tree.path_spends(), 2.0)
    assert ledger.spent == pytest.approx(2.0)


@pytest.mark.parametrize("seed", range(40))
def test_every_root_to_leaf_path_spends_at_most_epsilon(seed):
    """Random data, depth, stop count, budget split, partition and quality: the per-node
    ledgers, the nested ("full") ledger and the compact ("profile") ledger all show that no
    path spends more than epsilon, and a path that reaches the maximum depth spends all."""
    rng = np.random.default_rng(seed)
    cols, discrete, lo, hi, labels = random_box_problem(rng)
    eps = float(rng.choice([0.05, 0.5, 1.0, 3.0]))
    depth = int(rng.integers(0, 7))
    method = str(rng.choice(["median", "midpoint"]))
    stop = None if rng.random() < 0.3 else NoisyCountStop(float(rng.choice([0, 1, 3, 5, 10])))
    budget = PathBudget(split=float(rng.choice([0.2, 0.5, 0.8])),
                        stop_share=float(rng.choice([0.25, 0.5, 0.75])))
    quality = ClassBalance() if rng.random() < 0.5 else CountBalance()
    part = BoxPartition(cols, discrete, quality=quality, labels=labels, method=method,
                        attributes=str(rng.choice(["all", "random"])), domain_lo=lo,
                        domain_hi=hi)
    results = {}
    for detail in ("full", "profile"):
        ledger = PrivacyLedger(eps)
        tree = rps(len(labels), BoxRegion(lo.copy(), hi.copy()), partition=part,
                   summarize=box_summary(cols, discrete), stopping=stop, epsilon=eps,
                   depth=depth, rng=np.random.default_rng(seed + 1000), ledger=ledger,
                   budget=budget, ledger_detail=detail)
        results[detail] = (tree, ledger)
        spends = tree.path_spends()
        assert np.all(spends <= eps * (1 + TOL))
        assert ledger.spent == pytest.approx(spends.max(), rel=1e-12)
        for leaf, s in zip(tree.leaves, spends, strict=True):
            if leaf.reason == "depth":
                assert s == pytest.approx(eps, rel=1e-12)  # the leaf uses what is left
            assert s >= budget.split * eps * (1 - TOL)
    tree, ledger = results["full"]
    from_ledger = ledger_paths(ledger)
    assert len(from_ledger) == len(tree.leaves)
    assert max(from_ledger.values()) <= eps * (1 + TOL)
    assert sorted(from_ledger.values()) == pytest.approx(sorted(tree.path_spends()))
    _, ledger = results["profile"]
    branches: dict[str, float] = {}
    for e in ledger.entries:
        if e.primitive != "parallel":
            branches[e.path] = branches.get(e.path, 0.0) + e.epsilon
    assert branches and max(branches.values()) <= eps * (1 + TOL)
    assert len(ledger.entries) <= 4 * (depth + 1) * 3 + 1  # compact: per profile, not node


def test_same_seed_same_tree_and_profile_matches_full():
    rng = np.random.default_rng(3)
    cols, discrete, lo, hi, labels = random_box_problem(rng, n=50)
    part = BoxPartition(cols, discrete, quality=CountBalance(), domain_lo=lo, domain_hi=hi)
    runs = [
        rps(50, BoxRegion(lo.copy(), hi.copy()), partition=part,
            summarize=box_summary(cols, discrete), stopping=NoisyCountStop(3), epsilon=1.0,
            depth=6, rng=np.random.default_rng(9), ledger_detail=detail)
        for detail in ("full", "profile", "profile")
    ]
    regions = [[(tuple(lf.region.lo), tuple(lf.region.hi)) for lf in t.leaves] for t in runs]
    assert regions[0] == regions[1] == regions[2]


def test_a_path_cannot_overspend():
    class Greedy:  # spends more than it is given
        spends = True

        def can_split(self, node):
            return node.depth < 3

        def __call__(self, node, *, epsilon, rng, ledger):
            ledger.spend(0.6, label="greedy partition")
            return Split(node.rows, node.region, node.rows[:0], node.region)

    with pytest.raises(BudgetExceededError):
        rps(4, (0, 1), partition=Greedy(), summarize=lambda node, **kw: None, epsilon=1.0,
            depth=3, rng=np.random.default_rng(0))


def test_budget_allocation_per_level():
    b = PathBudget(split=0.5, stop_share=0.25)
    assert b.per_level(2.0, 10, partition_spends=True, stop_spends=True) == pytest.approx(
        (0.025, 0.075))
    assert b.per_level(2.0, 10, partition_spends=True, stop_spends=False) == pytest.approx(
        (0.0, 0.1))
    assert b.per_level(2.0, 10, partition_spends=False, stop_spends=True) == pytest.approx(
        (0.1, 0.0))
    assert b.per_level(2.0, 10, partition_spends=False, stop_spends=False) == (0.0, 0.0)
    assert b.per_level(2.0, 0, partition_spends=True, stop_spends=True) == (0.0, 0.0)
    with pytest.raises(PrivpubError, match="split = 1"):
        PathBudget(split=1.0).per_level(1.0, 3, partition_spends=True, stop_spends=False)
    for bad in (0.0, -0.1, 1.5, "half", True):
        with pytest.raises(PrivpubError):
            PathBudget(split=bad)
    with pytest.raises(PrivpubError):
        PathBudget(stop_share=1.0)


def test_framework_rejects_bad_arguments():
    part = BoxPartition([np.zeros(3)], [True], quality=CountBalance(), domain_lo=[0],
                        domain_hi=[3])
    region = BoxRegion(np.array([0.0]), np.array([3.0]))
    kw = dict(partition=part, summarize=lambda node, **k: None, rng=np.random.default_rng(0))
    for bad in (0, -1.0, float("nan"), float("inf"), "1"):
        with pytest.raises(PrivpubError, match="epsilon"):
            rps(3, region, epsilon=bad, depth=2, **kw)
    for bad in (-1, 1.5, "2"):
        with pytest.raises(PrivpubError, match="depth"):
            rps(3, region, epsilon=1.0, depth=bad, **kw)
    with pytest.raises(PrivpubError, match="ledger_detail"):
        rps(3, region, epsilon=1.0, depth=2, ledger_detail="everything", **kw)
    for bad in (-1, float("nan"), None, "5"):
        with pytest.raises(PrivpubError, match="stop_count"):
            NoisyCountStop(bad)
    with pytest.raises(PrivpubError, match="partition"):
        BoxPartition([np.zeros(3)], [True], quality=CountBalance(), method="mean")
    with pytest.raises(PrivpubError, match="attributes"):
        BoxPartition([np.zeros(3)], [True], quality=CountBalance(), attributes="some")
    with pytest.raises(PrivpubError, match="labels"):
        BoxPartition([np.zeros(3)], [True], quality=ClassBalance())


def test_tree_size_is_capped():
    cols = [np.zeros(1), np.zeros(1)]
    part = BoxPartition(cols, [True, True], quality=CountBalance(), method="midpoint",
                        domain_lo=[0, 0], domain_hi=[1000, 1000])
    kw = dict(partition=part, summarize=box_summary(cols, [True, True]), epsilon=1.0,
              rng=np.random.default_rng(0), max_nodes=100)
    root = BoxRegion(np.zeros(2), np.full(2, 1000.0))
    # no noisy stop: refused before building anything (2^20 possible leaves)
    with pytest.raises(PrivpubError, match="stop_count=0"):
        rps(1, root, depth=20, **kw)
    # fine when depth or the domain bounds the tree: 2^5 leaves, or 2 x 3 cells
    rps(1, root, depth=5, **kw)
    small = BoxPartition(cols, [True, True], quality=CountBalance(), domain_lo=[0, 0],
                         domain_hi=[1, 2])
    assert small.max_leaves() == 6
    rps(1, BoxRegion(np.zeros(2), np.array([1.0, 2.0])), depth=50,
        **{**kw, "partition": small})

    class Never:  # a stop that never fires: only the running count can catch the growth
        spends = False

        def __call__(self, node, **kw):
            return False

    with pytest.raises(PrivpubError, match="exceeds 100 nodes"):
        rps(1, root, depth=20, stopping=Never(), **kw)


# --------------------------------------------------------------------------- partitions
def naive_cut_table(values, kmin, kmax, g, labels=None):
    """Per single cut k: (k, left count, left positives), the slow way."""
    out = []
    for k in range(kmin, kmax + 1):
        left = values < k * g
        out.append((k, int(left.sum()), None if labels is None else int(labels[left].sum())))
    return out


@pytest.mark.parametrize("seed", range(25))
def test_cut_groups_match_every_single_cut(seed):
    rng = np.random.default_rng(seed)
    discrete = bool(rng.random() < 0.5)
    g = 1.0 if discrete else float(rng.choice([0.5, 1.0, 2.5]))
    n = int(rng.integers(0, 30))
    if discrete:
        values = rng.integers(-3, 9, n).astype(float)
        kmin, kmax = int(rng.integers(-4, 3)), int(rng.integers(2, 10))
    else:
        values = np.round(rng.uniform(-5, 12, n), 1)
        kmin, kmax = int(np.floor(-5 / g)) + 1, int(np.ceil(12 / g)) - 1
    labels = rng.integers(0, 2, n)
    groups = cut_groups(values, kmin, kmax, discrete=discrete, granularity=g, labels=labels)
    expanded = []
    for k0, s, left, pos in zip(groups.k_first, groups.size, groups.left, groups.left_pos,
                                strict=True):
        assert s >= 1
        expanded += [(int(k), int(left), int(pos)) for k in range(k0, k0 + s)]
    assert expanded == naive_cut_table(values, kmin, kmax, g, labels)


def all_small_datasets(max_size=4, n_values=3):
    """Every multiset of records (value in 0..n_values-1, binary class) of size <= max_size."""
    records = [(v, c) for v in range(n_values) for c in (0, 1)]
    for size in range(max_size + 1):
        yield from itertools.combinations_with_replacement(records, size)


def add_remove_neighbours(dataset, n_values=3):
    for i in range(len(dataset)):
        yield dataset[:i] + dataset[i + 1:]
    for rec in [(v, c) for v in range(n_values) for c in (0, 1)]:
        yield tuple(sorted(dataset + (rec,)))


def qualities(dataset, which, lo=0, hi=2):
    """Quality of every cut k = lo+1..hi of the region [lo, hi] (items outside ignored)."""
    v = np.array([r[0] for r in dataset if lo <= r[0] <= hi], dtype=float)
    y = np.array([r[1] for r in dataset if lo <= r[0] <= hi], dtype=np.int64)
    k = np.arange(lo + 1, hi + 1)
    left = (v[None, :] < k[:, None]).sum(1)
    if which == "count":
        return quality_count(left, v.size)
    left_pos = ((v[None, :] < k[:, None]) & (y[None, :] == 1)).sum(1)
    return quality_class(left, v.size, left_pos, y.sum())


@pytest.mark.parametrize(("which", "stated"), [("count", 0.5), ("class", 1.5)])
def test_quality_sensitivity_brute_force(which, stated):
    """Eq (2): 1/2 (Sec 3.2); Eq (3): 3/2 (derived). Both are attained (tight), in the
    whole domain and in a sub-region."""
    quality = CountBalance() if which == "count" else ClassBalance()
    assert quality.sensitivity == stated
    for lo, hi in ((0, 2), (1, 2)):
        worst = brute_force_sensitivity(
            lambda d, lo=lo, hi=hi: qualities(d, which, lo, hi), all_small_datasets(),
            add_remove_neighbours, norm="linf",
        )
        assert worst == pytest.approx(stated)


def test_quality_formulas_by_hand():
    # Eq 2: n = 10, r1 = 3, r2 = 7 -> (10 - 4) / 4
    assert quality_count(3, 10) == pytest.approx(1.5)
    # Eq 3: R1 holds 3 (+:1, -:2), R2 holds 7 (+:6, -:1): max(1 + 1, 6 + 2) = 8
    assert quality_class(3, 10, 1, 7) == pytest.approx((10 - 4 + 8) / 2)


def test_exponential_mechanism_prefers_balanced_splits_as_epsilon_grows():
    rng = np.random.default_rng(0)
    values = np.sort(rng.integers(0, 100, 400))
    median_cut = np.median(values)
    previous = None
    for eps in (0.001, 0.01, 0.1, 1.0, 10.0):
        cuts, p = cut_probabilities(values, epsilon=eps, lo=0, hi=99)
        assert p.sum() == pytest.approx(1.0)
        left = (values[None, :] < cuts[:, None]).sum(1)
        imbalance = float(np.sum(p * np.abs(2 * left - values.size)))
        if previous is not None:
            assert imbalance < previous
        previous = imbalance
    assert imbalance < 10  # at eps = 10 the cut is (almost) the median
    cuts, p = cut_probabilities(values, epsilon=10.0, lo=0, hi=99)
    assert abs(cuts[np.argmax(p)] - median_cut) <= 2
    # tiny epsilon: close to uniform over the 99 cuts
    _, p = cut_probabilities(values, epsilon=1e-6, lo=0, hi=99)
    assert np.allclose(p, 1 / 99, rtol=1e-3)


def test_sampled_cuts_follow_the_exponential_mechanism():
    values = np.array([0, 1, 1, 2, 5, 5, 6, 9], dtype=float)
    cuts, p = cut_probabilities(values, epsilon=2.0, lo=0, hi=9)
    part = BoxPartition([values], [True], quality=CountBalance(), domain_lo=[0], domain_hi=[9])
    node = Node(np.arange(values.size), BoxRegion(np.array([0.0]), np.array([9.0])), 0, "")
    rng = np.random.default_rng(5)
    n = 2500
    got = np.zeros(cuts.size)
    for _ in range(n):
        split = part(node, epsilon=2.0, rng=rng, ledger=None)
        got[int(split.right_region.lo[0]) - 1] += 1
    sd = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(got / n - p) <= 5 * sd + 1e-4)


def test_class_quality_moves_mass_to_class_separating_cuts():
    """Eq (3) adds the class term to the balance term: the classes separate at cut 3
    (3 vs 7 items), the balanced cut is 5. Eq (3) still prefers balance (moving one item
    changes 2 min(r1, r2) by 2 and the class term by at most 1) but shifts mass towards
    cut 3 relative to Eq (2); with classes that agree with the balanced cut it favours it."""
    values = np.arange(10, dtype=float)
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1, 1])
    cuts, p_count = cut_probabilities(values, epsilon=2.0, lo=0, hi=9)
    _, p_class = cut_probabilities(values, epsilon=2.0, lo=0, hi=9, quality=ClassBalance(),
                                   labels=labels)
    ratio = {name: p[cuts == 3][0] / p[cuts == 5][0]
             for name, p in (("count", p_count), ("class", p_class))}
    assert ratio["count"] == pytest.approx(np.exp(-2.0))   # q(5) - q(3) = 1, logit eps q
    assert ratio["class"] == pytest.approx(np.exp(-2.0 / 3))  # q diff 1, sensitivity 3/2
    labels = (values >= 5).astype(int)
    _, p_sep = cut_probabilities(values, epsilon=2.0, lo=0, hi=9, quality=ClassBalance(),
                                 labels=labels)
    _, p_mixed = cut_probabilities(values, epsilon=2.0, lo=0, hi=9, quality=ClassBalance(),
                                   labels=values.astype(int) % 2)
    assert p_sep[cuts == 5][0] > p_mixed[cuts == 5][0]


def test_random_attribute_choice_ignores_the_data():
    """attributes='random' picks the axis uniformly among splittable ones; 'all' prefers
    the axis with balanced cuts (axis 1 here is constant inside a wide range)."""
    n = 200
    rng = np.random.default_rng(0)
    cols = [rng.uniform(0, 10, n), np.full(n, 0.5)]
    region = BoxRegion(np.array([0.0, 0.0]), np.array([10.0, 10.0]))
    node = Node(np.arange(n), region, 0, "")
    picks = {}
    for attributes in ("all", "random"):
        part = BoxPartition(cols, [False, False], quality=CountBalance(), attributes=attributes,
                            domain_lo=[0, 0], domain_hi=[10, 10])
        chosen = [
            int(np.flatnonzero(part(node, epsilon=5.0, rng=rng, ledger=None).left_region.hi
                               != region.hi)[0])
            for _ in range(600)
        ]
        picks[attributes] = np.mean(np.array(chosen) == 1)
    assert picks["all"] < 0.05
    assert 0.4 < picks["random"] < 0.6


def test_midpoint_partition_halves_the_range_and_spends_nothing():
    cols = [np.arange(8, dtype=float), np.linspace(0, 9.9, 8)]
    part = BoxPartition(cols, [True, False], quality=CountBalance(), method="midpoint",
                        domain_lo=[0, 0], domain_hi=[7, 10])
    assert not part.spends
    node = Node(np.arange(8), BoxRegion(np.array([0.0, 0.0]), np.array([7.0, 10.0])), 0, "")
    ledger = PrivacyLedger(1.0)
    split = part(node, epsilon=0.0, rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.spent == 0
    # axis 0 has 7 cuts of 7, axis 1 9 of 9: equal relative width -> the first axis
    assert split.left_region.hi.tolist() == [3.0, 10.0]
    assert split.right_region.lo.tolist() == [4.0, 0.0]
    assert split.left_rows.tolist() == [0, 1, 2, 3]
    node = Node(split.left_rows, split.left_region, 1, "0")
    split = part(node, epsilon=0.0, rng=np.random.default_rng(0), ledger=ledger)
    assert split.left_region.hi.tolist() == [3.0, 5.0]  # now axis 1 is relatively wider


def test_narrow_regions_stop_for_free():
    cols = [np.array([0.0, 1.0, 1.0])]
    part = BoxPartition(cols, [True], quality=CountBalance(), domain_lo=[0], domain_hi=[1])
    ledger = PrivacyLedger(1.0)
    tree = rps(3, BoxRegion(np.array([0.0]), np.array([1.0])), partition=part,
               summarize=box_summary(cols, [True]), stopping=NoisyCountStop(0), epsilon=1.0,
               depth=10, rng=np.random.default_rng(0), ledger=ledger, ledger_detail="full")
    assert [leaf.reason for leaf in tree.leaves] in (["narrow", "narrow"], ["count"])
    # continuous axis: no multiple of the granularity strictly inside (0.2, 0.9)
    part = BoxPartition([np.array([0.5])], [False], quality=CountBalance())
    assert not part.can_split(Node(np.arange(1), BoxRegion(np.array([0.2]), np.array([0.9])),
                                   0, ""))
    assert part.can_split(Node(np.arange(1), BoxRegion(np.array([0.2]), np.array([1.9])), 0, ""))


# --------------------------------------------------------------------------- summaries
@pytest.mark.parametrize("mode", ["uniform", "midpoint", "lower"])
def test_summaries_stay_inside_their_regions(mode):
    rng = np.random.default_rng(1)
    for seed in range(15):
        cols, discrete, lo, hi, labels = random_box_problem(np.random.default_rng(seed), n=80)
        part = BoxPartition(cols, discrete, quality=CountBalance(), domain_lo=lo, domain_hi=hi)
        tree = rps(80, BoxRegion(lo.copy(), hi.copy()), partition=part,
                   summarize=box_summary(cols, discrete, mode), stopping=NoisyCountStop(2),
                   epsilon=2.0, depth=6, rng=rng)
        for leaf in tree.leaves:
            pts = leaf.summary
            r_lo, r_hi = leaf.region.lo, leaf.region.hi
            assert np.all(pts >= r_lo) and np.all(pts <= r_hi)
            if pts.size:
                d = np.asarray(discrete)
                assert np.all(pts[:, d] == np.floor(pts[:, d]))  # integers on integer axes
                # continuous axes: strictly below the upper end unless it is the domain's
                top = (r_hi < hi) & ~d
                assert np.all(pts[:, top] < r_hi[top])
            if mode == "lower":
                assert np.all(pts == r_lo)


def test_sample_in_box_modes():
    lo = np.array([[0.0, 2.0]])
    hi = np.array([[3.0, 4.0]])
    disc = np.array([True, False])
    rng = np.random.default_rng(0)
    assert sample_in_box(lo, hi, disc, "midpoint", rng).tolist() == [[1.0, 3.0]]
    assert sample_in_box(lo, hi, disc, "lower", rng).tolist() == [[0.0, 2.0]]
    many = sample_in_box(np.repeat(lo, 4000, 0), np.repeat(hi, 4000, 0), disc, "uniform", rng)
    counts = np.bincount(many[:, 0].astype(int), minlength=4)
    assert counts.size == 4 and counts.min() > 850  # each of 0..3 about 1000 times
    assert 2.0 <= many[:, 1].min() and many[:, 1].max() < 4.0
    with pytest.raises(PrivpubError, match="summary"):
        sample_in_box(lo, hi, disc, "mean", rng)
