"""The README's caveat table is the registry's (:func:`privpub.caveats.caveat_table`), and the
registry's caveats agree with the committed full audit (``docs/audit-verdicts.json``, written
by ``benchmarks/audit_table.py --save`` from ``privpub audit``'s store): every caveated
configuration is confirmed by a stored witness or explained by its mechanism's blind spot
(``register_mechanism(blind_spot=...)``), no caveat-free configuration is violated, and the
table names every mechanism the audit found caveated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privpub.audit import configurations
from privpub.audit.blind_spots import blind_spots, caveat_coverage
from privpub.audit.stored import config_label
from privpub.caveats import caveat_table, readme_table
from privpub.registry import built_in_mechanisms

ROOT = Path(__file__).resolve().parents[3]
RECORDS = json.loads((ROOT / "docs" / "audit-verdicts.json").read_text())
COVERAGE = caveat_coverage(RECORDS)


def test_the_readme_caveat_table_is_generated_from_the_registry():
    table = readme_table((ROOT / "README.md").read_text())
    assert table == caveat_table(), (
        "the README's caveat table differs from the registry's: run "
        "`python -m privpub.caveats README.md`")


def test_every_built_in_dp_configuration_has_a_committed_audit_of_its_current_caveat():
    stored = {config_label(r["mechanism"], r["config"]): r for r in RECORDS}
    for name, info in built_in_mechanisms().items():
        if not info.is_dp:
            continue
        for config in configurations(info):
            label = config_label(name, config)
            assert label in stored, f"{label}: no committed audit (rerun the full audit)"
            assert bool(stored[label]["caveat"]) == bool(info.caveat_for(config)), (
                f"{label}: its caveat changed since the committed audit")


def test_every_built_in_caveat_has_its_one_line_summary():
    missing = [n for n, i in built_in_mechanisms().items()
               if i.caveat is not None and not i.caveat_summary]
    assert not missing, f"register_mechanism(caveat_summary=...) missing for {missing}"


def test_no_caveat_free_configuration_is_violated():
    errors = [c["label"] for c in COVERAGE if c["coverage"] == "ERROR"]
    assert not errors, f"violated without a caveat: {errors}"


def test_every_caveat_is_confirmed_by_a_witness_or_explained():
    unexplained = [c["label"] for c in COVERAGE if c["coverage"] == "unexplained"]
    assert not unexplained, (f"caveated, not refuted, and no register_mechanism(blind_spot=...) "
                             f"says why: {unexplained}")
    assert all(c["witness_id"] for c in COVERAGE if c["coverage"] == "confirmed")


def test_every_blind_spot_explains_an_audited_configuration_the_audit_did_not_refute():
    for key in blind_spots(built_in_mechanisms()):
        matching = [c for c in COVERAGE if key in (c["label"], c["mechanism"])]
        assert matching, f"blind spot {key!r} names no audited configuration"
        assert any(c["coverage"] == "blind spot" for c in matching), f"{key}: stale sentence"


def test_the_caveat_table_names_every_mechanism_the_audit_found_caveated():
    table = caveat_table()
    caveated = {c["mechanism"] for c in COVERAGE if c["caveat"]}
    missing = sorted(n for n in caveated if f"`{n}`" not in table)
    assert not missing, f"caveated in the audit, not in the caveat table: {missing}"


@pytest.mark.parametrize("name", ["truncation", "hay_degree_sequence"])
def test_known_caveats_are_confirmed(name):
    assert any(c["coverage"] == "confirmed" for c in COVERAGE if c["mechanism"] == name)
