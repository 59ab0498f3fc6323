"""The probes behind farias2021's notes (Fig. 5, Fig. 6, Table 2).

- ShiftedLocalPrivTopk's noise-free limit (B -> inf) picks the top-k *by degree*, so its
  plateau is |EBC top-k ∩ degree top-k| / k; LocalPrivTopk's noise-free limit picks nodes of
  small degree (the inversion of Sec 4) and swapping delta^EBC for Sec 4.2's delta
  replacement removes it. Shown on a small graph built for it, and on Enron with the
  numbers the notes quote (``python -m privpub.probes.farias2021``, which this test runs).
- Fig. 6 (``fig6-local-gain``): with the authors' ACS class (column 10) LocalDiffPID3 gains
  about the paper's 11 points over GlobalDiffPID3, with ours (the last column) nothing.
- Table 2 (``table2-split``): no DP budget split takes the PrivateSQL-style baseline off
  chance; the paper's accuracy needs noise of scale about 5 per count.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import privpub.mechanisms  # noqa: F401
from privpub.algorithms.centrality import cached_ebc
from privpub.data import load_dataset
from privpub.probes import farias2021 as probe
from privpub.probes.support import needs_data
from privpub.types import Graph

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "conf" / "experiment" / "farias2021_fig5.yaml"


def _notes() -> str:
    return " ".join(yaml.safe_load(CONFIG.read_text())["notes"].split())


def test_noise_free_selections_on_a_built_graph():
    """Hub A (degree 100, neighbours in two cliques: EBC 2,500), star B (degree 80, EBC
    3,160), star C (degree 30, EBC 435). True top-2 by EBC: B, A; by degree: A, B."""
    a, clique1, clique2 = 0, list(range(1, 51)), list(range(51, 101))
    edges = []
    for c in (clique1, clique2):
        edges += [(a, v) for v in c] + [(u, v) for i, u in enumerate(c) for v in c[i + 1:]]
    b, c = 101, 182
    edges += [(b, 102 + i) for i in range(80)] + [(c, 183 + i) for i in range(30)]
    graph = Graph.from_edges(np.array(edges))
    assert cached_ebc(graph)[[a, b, c]].tolist() == [2500.0, 3160.0, 435.0]
    # shifted ranks by degree: the hub beats the star of larger EBC
    assert probe.noise_free_topk(graph, k=1, variant="shifted").tolist() == [a]
    assert probe.noise_free_topk(graph, k=1, variant="global").tolist() == [b]
    # local dampening inverts: the small star C (EBC 435) beats the hub A (EBC 2,500)
    assert set(probe.noise_free_topk(graph, k=2, variant="local").tolist()) == {b, c}
    # one component swapped: delta replacement (Sec 4.2) restores the true top-2
    assert set(probe.replaced_local_topk(graph, k=2).tolist()) == {a, b}


@needs_data("email_enron")
def test_enron_limits_are_the_numbers_the_notes_quote():
    rows = {r["k"]: r for r in probe.fig5_limits(load_dataset("email_enron"), sims=3)}
    for k, (both, local, noisy_local) in {5: (1.0, 0.2, 0.2), 10: (0.9, 0.1, 0.1),
                                          20: (0.95, 0.05, 0.05)}.items():
        r = rows[k]
        assert r["ebc_vs_degree"] == pytest.approx(both)
        # noise-free shifted = the degree top-k, so its accuracy is their overlap
        assert r["shifted"]["degree"] == 1.0 and r["shifted"]["degrees_of_degree_topk"]
        assert r["shifted"]["ebc"] == pytest.approx(both)
        assert r["shifted"]["noisy"] == pytest.approx(both)  # B = 1e4 is at the limit
        assert r["global"]["ebc"] == 1.0
        assert r["local"]["ebc"] == pytest.approx(local)
        assert r["local"]["noisy"] == pytest.approx(noisy_local)
        assert r["local"]["median_degree"] < r["true_median_degree"] / 5
        assert r["replaced"] == 1.0
    assert (rows[5]["local"]["median_degree"], rows[5]["true_median_degree"]) == (181, 1261)
    assert rows[5]["true_dampened_rank"] == (1, 251)
    notes = _notes()
    assert "python -m privpub.probes.farias2021" in notes
    for quoted in ("1.00 / 0.90 / 0.95", "0.20 / 0.10 / 0.05", "181 against 1,261", "251"):
        assert quoted in notes, quoted


def test_notes_quote_the_other_graphs_probe_numbers():
    """The Github and DBLP rows of the probe (not rerun here: DBLP takes longer) are the
    ones the notes quote; rerun with ``python -m privpub.probes.farias2021``."""
    notes = _notes()
    for quoted in ("1.00 / 1.00 / 0.95", "0.80 / 0.90 / 0.85", "0.00 / 0.00 / 0.00",
                   "0.20 / 0.10 / 0.10"):
        assert quoted in notes, quoted


# ------------------------------------------------------------------ Fig. 6: local gain
CONFIG6 = ROOT / "conf" / "experiment" / "farias2021_fig6.yaml"
CONFIG_T2 = ROOT / "conf" / "experiment" / "farias2021_table2.yaml"


def _notes_of(path) -> str:
    return " ".join(yaml.safe_load(path.read_text())["notes"].split())


@needs_data("acs")
def test_acs_class_reading_moves_local_gain_to_the_papers():
    """With the class the authors' later code predicts (ACS column 10), LocalDiffPID3 gains
    about 11 points over GlobalDiffPID3 at depth 5, eps = 0.05 (paper: up to 11%); with ours
    (the last column, 92.8% one class) the variants are within 2 points. And its noise-free
    limit is below Global's at depth 2: the inversion the paper describes on ACS."""
    acs = load_dataset("acs")
    theirs, ours = probe.with_class(acs, "10"), probe.with_class(acs, "22")
    gain = {name: probe.cv_accuracy(t, epsilon=0.05, depth=5, variant="local", reps=2)
            - probe.cv_accuracy(t, epsilon=0.05, depth=5, variant="global", reps=2)
            for name, t in (("theirs", theirs), ("ours", ours))}
    assert gain["theirs"] > 0.07
    assert abs(gain["ours"]) < 0.02
    free = {v: probe.noise_free_cv(theirs, depth=2, variant=v) for v in ("global", "local")}
    assert free["local"] < free["global"] - 0.02
    notes = _notes_of(CONFIG6)
    assert "fig6-local-gain" in notes and "no probe yet" not in notes


@needs_data("nltcs")
def test_nltcs_sensitivity_ratio_at_the_root():
    """Delta IG / LS^IG(T, 0) of the root's best attribute on NLTCS (class: last column),
    and how many times local dampening sharpens the root's choice: the numbers the notes
    quote (a ratio of about 4, not the paper's 'one order of magnitude')."""
    ratios = probe.sensitivity_ratios(probe.with_class(load_dataset("nltcs"), "15"), depth=2)
    assert ratios[0]["nodes"] == 1 and ratios[1]["nodes"] == 2
    assert ratios[0]["global / local"] == pytest.approx(4.1, abs=0.05)
    assert ratios[0]["sharpening"] == pytest.approx(7.2, abs=0.05)
    notes = _notes_of(CONFIG6)
    for quoted in ("4.1", "7.2"):
        assert quoted in notes, quoted


# ------------------------------------------------------------------ Table 2: PSQL split
def test_psql_probe_is_the_shipped_baseline_at_our_split():
    """The probe's release with the scale n S(D) / B draws what privatesql_topk draws."""
    from privpub.baselines.privatesql import privatesql_topk, view_sensitivity

    graph = load_dataset("karate")
    views, masks = probe.psql_views(graph)
    d = int(graph.degrees().max())
    scale = graph.n_nodes * view_sensitivity(d) / 10.0
    for seed in range(3):
        shipped = privatesql_topk(graph, epsilon=10.0, k=3, rng=np.random.default_rng(seed))
        ours = probe.psql_topk(views, masks, scale=scale, k=3, rng=np.random.default_rng(seed))
        assert list(shipped.value.items) == ours.tolist()


@needs_data("email_enron")
def test_no_dp_split_reaches_the_papers_psql():
    """Enron samples, B = 10: every split that is DP under edge neighbours stays at chance
    (about k / 50); the paper's 0.21 needs a Laplace scale of about 5 per count, i.e. B / n
    per view with sensitivity 1 per count, which is not DP (a view's counts move together)."""
    graphs = [load_dataset("email_enron_bfs", sample=s) for s in range(10)]
    acc = {label: probe.psql_split_accuracy(graphs, scale_of=fn, budget=10.0, runs=2)
           for label, (fn, _) in probe.PSQL_SPLITS.items()}
    for label, (_, relation) in probe.PSQL_SPLITS.items():
        if relation is not None:  # DP (under edge neighbours, the 1448 one for D <= 32)
            assert acc[label] < 0.08, label
    assert 0.14 < acc["B / n, sensitivity 1 per count"] < 0.28
    assert acc["whole B per view, sensitivity 1"] > 0.9
    notes = _notes_of(CONFIG_T2)
    assert "table2-split" in notes and "no probe yet" not in notes
    for quoted in ("0.209", "0.250", "0.263"):
        assert quoted in notes, quoted
