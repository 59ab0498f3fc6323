"""The experiments' notes explain every deviation: none is left saying that no probe has looked
at it, and every probe command a note or a doc quotes exists."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Where a reader meets the deviations: the experiments' notes and the documentation.
TEXTS = sorted([*(ROOT / "conf" / "experiment").glob("*.yaml"), *(ROOT / "docs").rglob("*.md"),
                ROOT / "README.md"])
#: Phrases that leave a deviation's cause open.
UNEXPLAINED = re.compile(r"no probe (?:yet|has)|not (?:yet )?probed", re.IGNORECASE)
PROBE_COMMAND = re.compile(r"python -m privpub\.probes\.(\w+)(?: ([a-z][\w-]*))?")


def _hits(pattern: re.Pattern) -> list[tuple[Path, int, re.Match]]:
    return [(path, number, match)
            for path in TEXTS
            for number, line in enumerate(path.read_text().splitlines(), 1)
            for match in pattern.finditer(line)]


def test_the_pattern_finds_what_it_is_for():
    assert UNEXPLAINED.search("the cause is open: no probe yet says why")
    assert PROBE_COMMAND.search("`python -m privpub.probes.day2016 fig5-oracle`").groups() == (
        "day2016", "fig5-oracle")


def test_no_deviation_is_left_without_a_probe():
    """Each deviation's note states its cause with a probe's numbers, or what the probes
    ruled out; "no probe yet" is never the last word."""
    left = [f"{path.relative_to(ROOT)}:{number}: {match.group(0)}"
            for path, number, match in _hits(UNEXPLAINED)]
    assert not left, "deviations without a probe:\n" + "\n".join(left)


@pytest.mark.parametrize("module,subcommand", sorted({
    (m.group(1), m.group(2) or "") for _, _, m in _hits(PROBE_COMMAND)}), ids=str)
def test_every_quoted_probe_command_exists(module, subcommand):
    """``python -m privpub.probes.<paper> [<subcommand>]`` in a note runs that module, and the
    subcommand is one its parser defines."""
    spec = importlib.util.find_spec(f"privpub.probes.{module}")
    assert spec is not None, f"privpub.probes.{module} does not exist"
    if subcommand:
        files = (Path(spec.origin).parent.glob("*.py") if spec.submodule_search_locations
                 else [Path(spec.origin)])
        source = "".join(f.read_text() for f in files)
        assert re.search(rf"add_parser\(\s*[\"']{re.escape(subcommand)}[\"']", source), (
            f"privpub.probes.{module} has no subcommand {subcommand!r}")
