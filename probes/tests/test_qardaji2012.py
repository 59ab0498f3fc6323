"""The probes behind qardaji2012's notes and the paper's non-private readings.

- The probe tree (:mod:`privpub.probes.qardaji2012`) is the mechanism's tree: same release for
  the same seed, so an ablation changes one component and nothing else.
- The numbers the Fig. 5 notes quote are reproduced by the probe (Caltech36, seeds 0-4, as
  ``python -m privpub.probes.qardaji2012 fig5`` prints them), within the tolerance stated in
  :data:`FIG5_QUOTED`, and the notes do quote them.
- The paper's removal-only reading is not DP (an empty region's exact zero), is
  registered as non-private, and is stored as such by the runner.
- Fig. 1's budget probe: no split over levels makes depth 50 best (small, fast version).
- Fig. 2(c)'s mixture probe: the public range the midpoint halves flips the noise-free
  order at depth 20 (3 data seeds), and the notes quote the probe's numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import privpub.baselines  # noqa: F401
import privpub.mechanisms  # noqa: F401
from privpub.data import load_dataset
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.rps.degree import rps_degree_sequence
from privpub.mechanisms.rps.removal_only import (
    RemovalOnlyLeafCount,
    removal_only_smooth_sensitivity,
    rps_degree_sequence_removal_only,
)
from privpub.metrics.distributions import emd_p2
from privpub.probes import qardaji2012
from privpub.probes.qardaji2012 import degree_rps_tree, partition_stats, root_max_logit
from privpub.probes.support import needs_data, run_at_smoke
from privpub.registry import DP_NOTIONS, get_mechanism
from privpub.registry import mechanisms as registered
from privpub.types import DegreeSequence

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf"


needs_caltech = needs_data("caltech36")


# --------------------------------------------------------------------------- probe = mechanism
@pytest.mark.parametrize("bound", ["max_degree", "n_minus_1"])
def test_probe_tree_is_the_mechanism(bound):
    graph = load_dataset("les_miserables")
    for seed in range(3):
        probe = degree_rps_tree(graph, epsilon=0.7, degree_bound=bound,
                                rng=np.random.default_rng(seed))
        ours = rps_degree_sequence(graph, epsilon=0.7, degree_bound=bound,
                                   rng=np.random.default_rng(seed))
        assert np.array_equal(probe.release.values, ours.value.values)
        strict = degree_rps_tree(graph, epsilon=0.7, degree_bound=bound, leaf="strict",
                                 rng=np.random.default_rng(seed))
        ref = rps_degree_sequence(graph, epsilon=0.7, degree_bound=bound, accounting="strict",
                                  rng=np.random.default_rng(seed))
        assert np.array_equal(strict.release.values, ref.value.values)
        reading = degree_rps_tree(graph, epsilon=0.7, degree_bound=bound, leaf="removal_only",
                                  rng=np.random.default_rng(seed))
        ref = rps_degree_sequence_removal_only(graph, epsilon=0.7, degree_bound=bound,
                                               rng=np.random.default_rng(seed))
        assert np.array_equal(reading.release.values, ref.value.values)


def test_true_leaf_counts_keep_the_partition():
    """The ablation swaps the leaf counts only: same leaves as the mechanism's tree."""
    graph = load_dataset("les_miserables")
    a = degree_rps_tree(graph, epsilon=1.0, rng=np.random.default_rng(4))
    b = degree_rps_tree(graph, epsilon=1.0, leaf="true", rng=np.random.default_rng(4))
    assert [leaf.region.lo[0] for leaf in a.tree.leaves] == [
        leaf.region.lo[0] for leaf in b.tree.leaves]
    assert [leaf.summary for leaf in b.tree.leaves] == [
        float(leaf.rows.size) for leaf in b.tree.leaves]


def test_ks_is_at_least_the_share_released_above_the_true_maximum():
    """The Fig. 4 notes' mechanism: degrees released above d_max bound KS from below."""
    from privpub.metrics.distributions import ks

    graph = load_dataset("les_miserables")
    truth = DegreeSequence(np.sort(graph.degrees()))
    for seed in range(3):
        run = degree_rps_tree(graph, epsilon=1.0, degree_bound="n_minus_1",
                              rng=np.random.default_rng(seed))
        share = partition_stats(run)["share_above_dmax"]
        assert share > 0
        assert ks(truth, run.release) >= share - 1e-12


def test_root_logit_with_n_minus_1_is_about_epsilon_over_120():
    for n in (100, 769, 36692):
        assert root_max_logit(n, n - 1, 1.0) == pytest.approx(1 / 120, rel=0.01)


# --------------------------------------------------------------------------- Fig. 5 numbers
#: What the Fig. 5 notes quote (Caltech36, 5 seeds 0-4, python -m privpub.probes.qardaji2012
#: fig5): (degree_bound, epsilon, quantity) -> (value, relative tolerance). The values are
#: deterministic for the seeds; the tolerance absorbs numerical differences across
#: platforms (BLAS, libm), not randomness.
FIG5_QUOTED = {
    ("n_minus_1", 1.0, "ours"): (196, 0.02),
    ("n_minus_1", 10.0, "ours"): (171, 0.02),
    ("n_minus_1", 1.0, "true_counts"): (0.74, 0.05),
    ("n_minus_1", 10.0, "true_counts"): (0.41, 0.05),
    ("n_minus_1", 0.1, "reading"): (26.7, 0.02),
    ("n_minus_1", 1.0, "reading"): (10.4, 0.02),
    ("n_minus_1", 10.0, "reading"): (7.69, 0.02),
    ("n_minus_1", 1.0, "leaves_above_dmax"): (466, 0.0),
    ("n_minus_1", 1.0, "leaves"): (688, 0.0),
    ("n_minus_1", 1.0, "share_above_dmax"): (0.21, 0.05),
    ("n_minus_1", 10.0, "share_above_dmax"): (0.17, 0.05),
    ("n_minus_1", 1.0, "noise_over_count"): (219, 0.02),
    ("n_minus_1", 10.0, "noise_over_count"): (3.32, 0.02),
    ("n_minus_1", 100.0, "noise_over_count"): (0.237, 0.02),
    ("max_degree", 1.0, "true_counts"): (0.07, 0.05),
    ("max_degree", 1.0, "noise_over_count"): (187, 0.02),
    ("max_degree", 10.0, "noise_over_count"): (3.04, 0.02),
    ("max_degree", 100.0, "noise_over_count"): (0.237, 0.02),
    ("max_degree", 100.0, "ours"): (2.4, 0.02),
    ("max_degree", 1000.0, "ours"): (0.205, 0.05),
}


def _probe_value(graph, bound, eps, what, cache={}):  # noqa: B006 - per-session cache
    key = (bound, eps)
    if key not in cache:
        truth = DegreeSequence(np.sort(graph.degrees()))
        runs = {leaf: [degree_rps_tree(graph, epsilon=eps, degree_bound=bound, leaf=leaf,
                                       rng=np.random.default_rng(s)) for s in range(5)]
                for leaf in ("smooth", "true", "removal_only")}
        stats = [partition_stats(r) for r in runs["smooth"]]
        cache[key] = {
            "ours": np.mean([emd_p2(truth, r.release) for r in runs["smooth"]]),
            "true_counts": np.mean([emd_p2(truth, r.release) for r in runs["true"]]),
            "reading": np.mean([emd_p2(truth, r.release) for r in runs["removal_only"]]),
            "leaves": np.mean([s["leaves"] for s in stats]),
            "leaves_above_dmax": np.mean([s["leaves_above_dmax"] for s in stats]),
            "share_above_dmax": np.mean([s["share_above_dmax"] for s in stats]),
            "noise_over_count": np.median([s["noise_over_count"] for s in stats]),
        }
    return cache[key][what]


@needs_caltech
@pytest.mark.parametrize("key", sorted(FIG5_QUOTED, key=str))
def test_fig5_probe_reproduces_the_quoted_numbers(key):
    bound, eps, what = key
    value, tol = FIG5_QUOTED[key]
    got = _probe_value(load_dataset("caltech36"), bound, eps, what)
    if what in ("leaves", "leaves_above_dmax"):
        assert round(got) == value
    else:
        assert got == pytest.approx(value, rel=tol + 0.005)  # + the notes' rounding


def test_fig5_notes_quote_the_probe_numbers():
    """The notes state the numbers the probe reproduces (and the command behind them)."""
    notes = yaml.safe_load((CONF / "experiment" / "qardaji2012_fig5.yaml").read_text())["notes"]
    text = " ".join(notes.split())
    assert "python -m privpub.probes.qardaji2012 fig5" in text
    for (bound, eps, what), (value, _) in FIG5_QUOTED.items():
        shown = f"{value:.0%}" if what == "share_above_dmax" else f"{value:g}"
        assert shown in text, f"the notes do not quote {what} = {shown} ({bound}, eps {eps})"


def test_fig5_notes_no_longer_blame_the_summaries():
    notes = yaml.safe_load((CONF / "experiment" / "qardaji2012_fig5.yaml").read_text())
    assert "no budget removes" not in notes["notes"]
    for claim in notes["claims"]:
        assert "no budget removes" not in str(claim.get("deviation"))


# --------------------------------------------------------------------------- not DP
def test_removal_only_reading_releases_an_empty_region_exactly():
    """The reading is not DP: an empty region's count is released as exactly 0 (no noise),
    while a neighbour that puts one node there gets a noisy, non-zero count almost
    surely. P[output = 0] is 1 on one side and 0 on the other: no epsilon bounds that."""
    from privpub.mechanisms.rps.framework import Node
    from privpub.mechanisms.rps.partition import BoxRegion

    hist = np.array([0, 3, 2, 0, 0, 1])
    leaf = RemovalOnlyLeafCount(hist, 5, 4.0)
    region = BoxRegion(np.array([3.0]), np.array([4.0]))
    empty = Node(np.array([], dtype=np.int64), region, 15, "")
    one = Node(np.array([7]), region, 15, "")
    zeros_empty = [leaf(empty, epsilon=1.0, rng=np.random.default_rng(s),
                        ledger=PrivacyLedger(1.0)) for s in range(200)]
    zeros_one = [leaf(one, epsilon=1.0, rng=np.random.default_rng(s),
                      ledger=PrivacyLedger(1.0)) for s in range(200)]
    assert all(v == 0.0 for v in zeros_empty)
    assert not any(v == 0.0 for v in zeros_one)
    s = removal_only_smooth_sensitivity(hist, [3, 3], [0, 1], 5, 0.1)
    assert s[0] == 0 and s[1] > 0


def test_paper_readings_are_registered_non_private():
    """Every mechanism an experiment draws as a reading that is not private ("not DP" or
    "not private" in its label: the paper's, or public code's) is registered with privacy
    none and a caveat, whatever its parameters; the registry never lists it as DP."""
    readings = {}
    for path in sorted((CONF / "experiment").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        for entry in spec.get("mechanisms") or []:
            label = str(entry.get("label", "")) if isinstance(entry, dict) else ""
            if "not DP" in label or "not private" in label:
                readings[entry["name"]] = path.stem
    assert {"rps_degree_sequence_removal_only", "ldrc_true_count_order",
            "pygmalion_true_count_order"} <= set(readings)
    for name in readings:
        info = get_mechanism(name)
        assert info.privacy == "none" and info.privacy not in DP_NOTIONS and not info.is_dp
        assert info.caveat_for({}) and "NOT private" in info.caveat_for({})
    assert not registered()["rps_degree_sequence_removal_only"].is_dp


def test_paper_reading_is_stored_and_reported_as_non_private(tmp_path):
    """Run qardaji2012 Fig. 5 at smoke scale: the reading's rows say privacy none with the
    caveat and get no noise-free twin; the claims carry the reading's numbers; the report
    never calls it DP."""
    from privpub.experiments.figures import draw_experiment
    from privpub.experiments.store import ResultStore

    spec = run_at_smoke("qardaji2012_fig5", tmp_path)
    draw_experiment(spec, tmp_path)
    out = tmp_path / "qardaji2012_fig5" / "smoke"
    rows = ResultStore(out / "store").load(statuses=None)
    reading = rows[rows["mechanism"] == "rps_degree_sequence_removal_only"]
    assert not reading.empty
    assert set(reading["privacy"]) == {"none"}
    assert reading["caveat"].str.contains("NOT private").all()
    assert not reading.get("noise_free", False).fillna(False).astype(bool).any()
    dp = rows[rows["mechanism"] == "rps_degree_sequence"]
    assert set(dp.loc[~dp["noise_free"].fillna(False).astype(bool), "privacy"]) == {"node-DP"}
    claims = {c["id"]: c for c in json.loads((out / "claims.json").read_text())}
    assert claims["rps_beats_hay_emd"]["paper_reading"]["series"].endswith("not DP]")
    assert claims["rps_beats_hay_emd"]["paper_reading"]["n_groups"] >= 1
    assert claims["rps_beats_hay_emd"]["noise_free"] is not None
    report = (tmp_path / "report.md").read_text()
    for line in report.splitlines():
        if "removal-only" in line:
            assert "node-DP" not in line.split("removal-only")[1][:60]


# --------------------------------------------------------------------------- Fig. 1 budget
def test_fig1_front_loaded_budget_makes_deep_trees_tie():
    """With level_ratio < 1 the levels below the noisy-count stop get almost nothing, so
    depth 50 and depth 100 build the same tree: the budget split cannot make depth 50
    strictly better than deeper trees (the Fig. 1 probe's finding, small and fast)."""
    from privpub.mechanisms.rps.table import rps_table

    table = load_dataset("gaussian_1d", n=2000, rng=0)
    for seed in range(3):
        a = rps_table(table, epsilon=1.0, depth=50, stop_count=5, level_ratio=0.7,
                      summary="midpoint", rng=np.random.default_rng(seed))
        b = rps_table(table, epsilon=1.0, depth=100, stop_count=5, level_ratio=0.7,
                      summary="midpoint", rng=np.random.default_rng(seed))
        assert a.info["leaves"] == b.info["leaves"]
        assert np.allclose(np.sort(a.value.data["x"]), np.sort(b.value.data["x"]))


def test_level_ratio_one_is_the_equal_split():
    from privpub.mechanisms.rps.budget import PathBudget

    equal = PathBudget().per_level(2.0, 10, partition_spends=True, stop_spends=True, level=3)
    assert equal == PathBudget().per_level(2.0, 10, partition_spends=True, stop_spends=True)
    front = PathBudget(level_ratio=0.5)
    levels = [sum(front.per_level(2.0, 10, partition_spends=True, stop_spends=True, level=i))
              for i in range(10)]
    assert sum(levels) == pytest.approx(1.0) and levels[0] > 0.49


@pytest.mark.parametrize("ratio", [0.5, 0.9, 1.3])
def test_every_path_stays_within_epsilon_with_any_level_ratio(ratio):
    from privpub.mechanisms.rps.table import rps_table

    table = load_dataset("gaussian_1d", n=500, rng=1)
    for seed in range(3):
        ledger = PrivacyLedger(0.7)
        out = rps_table(table, epsilon=0.7, depth=12, stop_count=3, level_ratio=ratio,
                        rng=np.random.default_rng(seed), ledger=ledger)
        assert ledger.spent <= 0.7 * (1 + 1e-9)
        assert out.info["leaves"] >= 1


# --------------------------------------------------------------------------- fig3 labels
def _adult():
    return load_dataset("adult", attributes="qardaji2012")


def test_recording_leaves_relabels_every_row_with_its_leaf_majority():
    """The probe's relabelling: every row gets the class its leaf releases; noise-free,
    the share of rows that keep their class is the release's purity."""
    from privpub.noise import noise_off

    table = load_dataset("gaussian_mixture", n=400, rng=0)
    cls = table.schema.class_attribute
    with noise_off(), qardaji2012.recording_leaves() as leaves:
        out = qardaji2012.rps_table(table, epsilon=1.0, depth=6, rng=np.random.default_rng(0))
    assert len(leaves) == out.info["leaves"]
    relabelled = qardaji2012.relabel_by_leaf_majority(table, leaves)
    same = relabelled.data[cls].astype(str).to_numpy() == table.data[cls].astype(str).to_numpy()
    assert same.mean() == pytest.approx(out.diagnostics["purity"])
    import privpub.mechanisms.rps.table as rt
    assert rt.TableLeafSummary.__name__ == "TableLeafSummary"  # the patch is undone


@needs_data("adult")
def test_fig3_leaf_majority_labels_lift_cv_above_the_original():
    """Fig. 3's notes: the noise-free release scores above the original data in CV because
    every released row carries its leaf's majority class. One component swapped: the
    original rows, features kept, relabelled with their leaf's majority class score as
    high as the release (seed 0: 0.854 vs 0.840; original 0.797)."""
    adult = _adult()
    (r,) = qardaji2012.fig3_label_rows(adult, seeds=(0,))
    assert r["agree"] == pytest.approx(r["purity"]) and r["agree"] == pytest.approx(0.878, abs=5e-4)
    assert r["cv_original"] == pytest.approx(0.797, abs=5e-4)
    assert r["cv_release"] == pytest.approx(0.840, abs=5e-4)
    assert r["cv_relabelled"] == pytest.approx(0.854, abs=5e-4)
    assert r["cv_relabelled"] >= r["cv_release"] > r["cv_original"] + 0.03
    notes = " ".join(yaml.safe_load(
        (CONF / "experiment" / "qardaji2012_fig3.yaml").read_text())["notes"].split())
    for quoted in ("0.876-0.878", "0.797-0.798", "0.839-0.847", "0.848-0.854",
                   "python -m privpub.probes.qardaji2012 fig3-labels"):
        assert quoted in notes, quoted


# --------------------------------------------------------------------------- fig2c mixture
def test_mixture_table_widens_the_domain_and_keeps_the_rows():
    a = qardaji2012.mixture_table((30.0, 38.0, 80.0), n=500, rng=np.random.default_rng(3))
    b = qardaji2012.mixture_table((30.0, 38.0, 80.0), n=500, upper=160.0,
                                  rng=np.random.default_rng(3))
    assert a.data.equals(b.data)
    assert a.schema["x0"].domain == (-7.0, 140.0) and b.schema["x0"].domain == (-7.0, 160.0)
    with pytest.raises(ValueError, match="clip"):
        qardaji2012.mixture_table((30.0, 38.0, 100.0), n=50, upper=150.0,
                                  rng=np.random.default_rng(0))


def test_fig2c_mixture_the_range_the_midpoint_halves_flips_depth_20():
    """Fig. 2(c)'s notes: noise-free at depth 20 the close pair alone (30/38/80) favours the
    midpoint like ours, the uneven mixture (30/38/100) the median; the same close-pair rows
    with the uneven mixture's public domain [-7, 160] favour the median too, so what flips
    is the range the midpoint halves (its cells 9.2 -> 10.4 wide), not the far rows: more
    rows stay in depth-stopped cells, less pure than the median's leaves. Every difference
    is under 0.01 (3 data seeds here; the notes quote 5)."""
    steps = {k: qardaji2012.MIXTURE_STEPS[k] for k in (
        "ours 20/50/80", "close pair only 30/38/80", "uneven 30/38/100",
        "close pair only, uneven's domain")}
    rows = {r["mixture"]: r for r in qardaji2012.fig2c_mixture_rows(
        steps, seeds=range(3), depths=(20,))}
    ours, pair = rows["ours 20/50/80"], rows["close pair only 30/38/80"]
    uneven, pair_wide = rows["uneven 30/38/100"], rows["close pair only, uneven's domain"]
    assert ours["diff"] < -0.002 and pair["diff"] < -0.002
    assert uneven["diff"] > 0.0015 and pair_wide["diff"] > 0.0015
    assert all(abs(r["diff"]) < 0.01 for r in rows.values())
    # the median does not depend on the public domain; the midpoint does
    assert pair_wide["median"] == pair["median"]
    assert pair["cell"] == pytest.approx(147 / 16) and pair_wide["cell"] == pytest.approx(167 / 16)
    assert pair_wide["capped_share"] > pair["capped_share"] + 0.05
    assert max(pair["capped_purity"], pair_wide["capped_purity"]) < pair["median"] - 0.02
    # ours: the depth-stopped cells are almost pure, so coarser cells cost little
    assert ours["capped_purity"] > 0.99


def test_fig2c_notes_state_the_mixture_cause():
    notes = yaml.safe_load((CONF / "experiment" / "qardaji2012_fig2.yaml").read_text())
    text = " ".join(notes["notes"].split())
    assert "no probe yet" not in text
    assert "python -m privpub.probes.qardaji2012 fig2c-mixture" in text
    for quoted in ("0.9028", "0.9083", "0.9017", "0.9062", "0.9040"):
        assert quoted in text, quoted
