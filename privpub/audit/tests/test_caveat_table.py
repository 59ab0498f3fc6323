"""The README's caveat table against the committed full audit (``docs/audit-verdicts.json``,
written by ``benchmarks/audit_table.py --save`` from ``privpub audit``'s store): every
caveated configuration is confirmed by a stored witness or explained by a blind spot
(:mod:`privpub.audit.blind_spots`), no caveat-free configuration is violated, and the table
names every mechanism the audit found caveated."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

import pytest

from privpub.audit import configurations
from privpub.audit.blind_spots import BLIND_SPOTS, caveat_coverage
from privpub.audit.stored import config_label
from privpub.registry import DP_NOTIONS, get_mechanism, mechanisms

ROOT = Path(__file__).resolve().parents[3]
RECORDS = json.loads((ROOT / "docs" / "audit-verdicts.json").read_text())
COVERAGE = caveat_coverage(RECORDS)


def readme_caveats() -> dict[str, str]:
    """mechanism name -> claim, for every row of the README's caveat table (patterns such as
    ``theta_*_qbest`` matched against the registry)."""
    text = (ROOT / "README.md").read_text()
    table = text.split("| mechanism | claim | why it carries a caveat |", 1)[1]
    rows = [line for line in table.split("\n\n", 1)[0].splitlines()[2:] if line.startswith("|")]
    names = sorted(mechanisms())
    out = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for pattern in re.findall(r"`([^`]+)`", cells[0]):
            for name in fnmatch.filter(names, pattern):
                out[name] = cells[1]
    return out


#: The packages whose mechanisms are built in (plug-ins other tests registered in this
#: process, e.g. the README's example, are not).
BUILT_IN = ("privpub.mechanisms.", "privpub.baselines.")


def test_every_built_in_dp_configuration_has_a_committed_audit_of_its_current_caveat():
    stored = {config_label(r["mechanism"], r["config"]): r for r in RECORDS}
    for name, info in mechanisms().items():
        built_in = info.func.__module__.startswith(BUILT_IN)
        if not info.is_dp or name.startswith("toy_") or not built_in:
            continue
        for config in configurations(info):
            label = config_label(name, config)
            assert label in stored, f"{label}: no committed audit (rerun the full audit)"
            assert bool(stored[label]["caveat"]) == bool(info.caveat_for(config)), (
                f"{label}: its caveat changed since the committed audit")


def test_no_caveat_free_configuration_is_violated():
    errors = [c["label"] for c in COVERAGE if c["coverage"] == "ERROR"]
    assert not errors, f"violated without a caveat: {errors}"


def test_every_caveat_is_confirmed_by_a_witness_or_explained():
    unexplained = [c["label"] for c in COVERAGE if c["coverage"] == "unexplained"]
    assert not unexplained, (f"caveated, not refuted, and no sentence in "
                             f"privpub/audit/blind_spots.py says why: {unexplained}")
    assert all(c["witness_id"] for c in COVERAGE if c["coverage"] == "confirmed")


def test_every_blind_spot_explains_an_audited_configuration_the_audit_did_not_refute():
    for key in BLIND_SPOTS:
        matching = [c for c in COVERAGE if key in (c["label"], c["mechanism"])]
        assert matching, f"blind spot {key!r} names no audited configuration"
        assert any(c["coverage"] == "blind spot" for c in matching), f"{key}: stale sentence"


def test_readme_caveat_table_names_every_caveated_dp_mechanism():
    table = readme_caveats()
    caveated = {c["mechanism"] for c in COVERAGE if c["caveat"]}
    missing = sorted(caveated - set(table))
    assert not missing, f"caveated in the registry and the audit, not in the README: {missing}"
    for name, claim in table.items():
        if claim in DP_NOTIONS:
            assert name in {c["mechanism"] for c in COVERAGE}, f"{name}: not audited"
            assert get_mechanism(name).privacy == claim


@pytest.mark.parametrize("name", ["truncation", "hay_degree_sequence"])
def test_known_caveats_are_confirmed(name):
    assert any(c["coverage"] == "confirmed" for c in COVERAGE if c["mechanism"] == name)
