"""Claimed beside audited privacy: per series (plots/audited_privacy.py) and in the report
(plots/report/privacy.py), read from the stored audits only."""

import json

import pandas as pd

from privpub.plots.audited_privacy import privacy_text, series_privacy
from privpub.plots.report import write_report
from privpub.plots.tests.test_report import write_run

AUDITS = [
    {"mechanism": "hay_degree_sequence", "config": {"degree_bound": "max_degree", "epsilon": 1},
     "mode": "full", "privacy": "node-DP", "epsilon": 1.0, "caveat": "Lambda from the data",
     "verdict": "violated", "epsilon_lower_bound": 5.7, "witness_id": "4b83c4973faf"},
    {"mechanism": "hay_degree_sequence", "config": {"degree_bound": "n_minus_1", "epsilon": 1},
     "mode": "full", "privacy": "node-DP", "epsilon": 1.0, "caveat": None,
     "verdict": "inconclusive", "epsilon_lower_bound": 0.15, "witness_id": None},
    {"mechanism": "truncation", "config": {"theta": 2, "epsilon": 1}, "mode": "full",
     "privacy": "node-DP", "epsilon": 1.0, "caveat": "beta too large", "verdict": "violated",
     "epsilon_lower_bound": 4.5, "witness_id": "058e21e83828"},
    {"mechanism": "leaky", "config": {"epsilon": 1}, "mode": "quick", "privacy": "edge-DP",
     "epsilon": 1.0, "caveat": None, "verdict": "violated", "epsilon_lower_bound": 3.0,
     "witness_id": "0123456789ab"},
]


def results_with_audits(tmp_path):
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "verdicts.json").write_text(json.dumps(AUDITS))
    return tmp_path


def rows():
    def row(label, mechanism, privacy, params, caveat=None):
        return {"label": label, "mechanism": mechanism, "privacy": privacy, "caveat": caveat,
                "params": json.dumps(params), "metric": "l1", "value": 1.0}

    return pd.DataFrame([
        row("Hay", "hay_degree_sequence", "node-DP", {"epsilon": 0.5,
                                                      "degree_bound": "max_degree"}, "Lambda"),
        row("Hay", "hay_degree_sequence", "node-DP", {"epsilon": 2,
                                                      "degree_bound": "max_degree"}, "Lambda"),
        row("Hay n-1", "hay_degree_sequence", "node-DP", {"epsilon": 1,
                                                          "degree_bound": "n_minus_1"}),
        row("Leaky", "leaky", "edge-DP", {"epsilon": 1}),
        row("New", "ldrc", "edge-DP", {"epsilon": 1}),
        row("Original", "original_graph", "none", {}),
        row("Trunc", "truncation", "node-DP", {"epsilon": 1, "theta": 8}, "beta too large"),
    ])


def test_every_series_gets_its_claim_and_the_audit_of_its_configuration(tmp_path):
    entries = {e["series"]: e for e in series_privacy(rows(), results_with_audits(tmp_path))}
    assert entries["Hay"]["epsilons"] == [0.5, 2.0] and entries["Hay"]["caveat"] == "Lambda"
    assert entries["Hay"]["verdict"] == "violated" and not entries["Hay"]["error"]
    assert entries["Hay"]["witness_id"] == "4b83c4973faf"
    assert entries["Hay n-1"]["verdict"] == "inconclusive"
    assert entries["Leaky"]["verdict"] == "violated" and entries["Leaky"]["error"]
    assert entries["New"]["verdict"] == "not audited"
    assert entries["Original"]["verdict"] == "not a DP claim"
    # another theta than the audited one: the configuration with the same caveat speaks
    assert entries["Trunc"]["verdict"] == "violated" and not entries["Trunc"]["error"]
    text = privacy_text(list(entries.values()))
    assert "ERROR: violated (eps >= 3, quick) without a caveat" in text
    assert "| Hay | `hay_degree_sequence` | node-DP | 0.5, 2 | violated (eps >= 5.7, full)" in text


def test_no_stored_audits_says_not_audited(tmp_path):
    entries = series_privacy(rows(), tmp_path)
    assert {e["verdict"] for e in entries} == {"not audited", "not a DP claim"}


def test_report_shows_every_audit_and_each_runs_series_privacy(tmp_path):
    root = results_with_audits(tmp_path)
    entries = series_privacy(rows(), root)
    write_run(root / "day2016_fig3" / "paper", meta={"series_privacy": entries})
    md = write_report(root).read_text()
    html = (root / "report.html").read_text()
    assert "## Audited privacy" in md and "#### Privacy: claimed and audited" in md
    assert "**ERROR: violated without a caveat**" in md  # leaky, caveat-free
    assert "| hay_degree_sequence | degree_bound=max_degree | node-DP, eps = 1 | violated" in md
    assert "not audited" in md and "## audit" not in md  # audit/ is not an experiment
    assert "Audited privacy" in html and "ERROR: violated without a caveat" in html
    assert 'class="warn"' in html
