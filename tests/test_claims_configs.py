"""Every experiment's ``claims:`` parse (``experiments/claims/``), name series that the
experiment draws and columns its mechanisms have: a typo in any YAML fails CI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from privpub.experiments.claims import parse_claims, referenced_columns, referenced_labels
from privpub.registry import get_mechanism

CONF = Path(__file__).resolve().parents[1] / "conf" / "experiment"
EXPERIMENTS = sorted(CONF.glob("*.yaml"))
#: Result columns a claim may filter or group by besides the mechanisms' parameters.
COLUMNS = {
    "dataset", "dataset_options", "dataset_label", "label", "mechanism", "metric", "privacy",
    "caveat", "role", "paper",
}
#: Papers whose experiments must state their claims.
RETROFITTED = ("day2016_", "qardaji2012_", "epasto2022_", "sala2011_", "farias2021_")


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text()) or {}


def _blocks(exp: dict):
    """The experiment and each of its scale blocks (which may override any key)."""
    yield "base", exp
    for scale, block in (exp.get("scales") or {}).items():
        if isinstance(block, dict):
            yield scale, {**exp, **block}


def _mechanisms(exp: dict):
    """Every mechanism entry of the experiment and its scales; a scale block may patch the
    entries by label or key (a mapping), which adds a mechanism only if it names one."""
    for _, block in _blocks(exp):
        entries = block.get("mechanisms") or []
        if isinstance(entries, dict):
            entries = [
                {"label": key, **patch}
                for key, patch in entries.items()
                if isinstance(patch, dict) and "name" in patch
            ]
        for entry in entries:
            yield {"name": entry} if isinstance(entry, str) else entry


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_claims_parse(path):
    exp = _load(path)
    for scale, block in _blocks(exp):
        if "claims" in block:
            parse_claims(block["claims"], where=f"{path.stem} [{scale}]", plots=block.get("plots"))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_claims_name_what_the_experiment_has(path):
    exp = _load(path)
    claims = parse_claims(exp.get("claims"), where=path.stem, plots=exp.get("plots"))
    labels, columns = set(), set(COLUMNS)
    for entry in _mechanisms(exp):
        labels.add(str(entry.get("label", entry["name"])))
        columns |= set(get_mechanism(entry["name"]).parameters)
        columns |= set(entry.get("params") or {}) | set(entry.get("grid") or {})
    for _, block in _blocks(exp):
        columns |= set(block.get("grid") or {})
    unknown = referenced_labels(claims) - labels
    assert not unknown, f"{path.stem}: claims name series {sorted(unknown)}; labels: {labels}"
    unknown = referenced_columns(claims) - columns
    assert not unknown, f"{path.stem}: claims name columns {sorted(unknown)}"


@pytest.mark.parametrize(
    "path",
    [p for p in EXPERIMENTS if p.stem.startswith(RETROFITTED)],
    ids=[p.stem for p in EXPERIMENTS if p.stem.startswith(RETROFITTED)],
)
def test_paper_experiments_state_their_claims(path):
    claims = parse_claims(_load(path).get("claims"), where=path.stem)
    assert claims, f"{path.stem} states none of its paper's claims"
    for claim in claims:
        assert claim["source"].startswith(_PLACES), (claim["id"], claim["source"])


#: Where in a paper a claim may come from.
_PLACES = ("Sec", "Table", "Fig", "Appendix", "Abstract", "Example", "Lemma", "Theorem", "Def",
           "Algorithm")


def test_a_typo_is_caught(tmp_path):
    """The check above can fail: a misspelt key or series is reported."""
    exp = _load(CONF / "qardaji2012_fig5.yaml")
    bad = [{**exp["claims"][0], "thann": "Hay et al."}]
    with pytest.raises(Exception, match="unknown key"):
        parse_claims(bad, where="qardaji2012_fig5")
    claims = parse_claims([{**exp["claims"][0], "than": "Hay et al"}], where="x")
    reading = "RPS [paper's removal-only sensitivity, not DP]"  # its paper_reading
    assert referenced_labels(claims) - {"RPS", "Hay et al.", reading} == {"Hay et al"}
