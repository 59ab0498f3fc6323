"""The README's caveat table, generated from the registry.

Every built-in mechanism registered with a ``caveat`` has a row; mechanisms whose claim
and one-line summary (``register_mechanism(caveat_summary=...)``) are the same share one.
``python -m privpub.caveats README.md`` rewrites the table in place;
``privpub/audit/tests/test_caveat_table.py`` fails when the README's table differs from
:func:`caveat_table` (and checks the caveats against the committed full audit).
"""

from __future__ import annotations

import sys
from pathlib import Path

from privpub.registry import NO_PRIVACY, MechanismInfo, built_in_mechanisms

__all__ = ["HEADER", "caveat_table", "readme_table", "write_readme_table"]

#: The table's header row (also how the README's table is found).
HEADER = "| mechanism | claim | why it carries a caveat |"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def caveat_table(registry: dict[str, MechanismInfo] | None = None) -> str:
    """The Markdown table of the caveated mechanisms of ``registry`` (default: the built-in
    ones): ``| `a`, `b` (paper) | claim | summary |``, DP claims first, then by paper."""
    registry = built_in_mechanisms() if registry is None else registry
    rows: dict[tuple[str, str], list[MechanismInfo]] = {}
    for name in sorted(registry):
        info = registry[name]
        if info.caveat is None:
            continue
        summary = info.caveat_summary or (info.caveat if isinstance(info.caveat, str) else
                                          "depends on its parameters")
        rows.setdefault((info.privacy, summary), []).append(info)
    lines = [HEADER, "|---|---|---|"]
    for (claim, summary), infos in sorted(
            rows.items(), key=lambda kv: (kv[0][0] == NO_PRIVACY, kv[1][0].paper or "",
                                          kv[1][0].name)):
        papers = ", ".join(dict.fromkeys(i.paper for i in infos if i.paper))
        names = ", ".join(f"`{i.name}`" for i in infos) + (f" ({papers})" if papers else "")
        lines.append(f"| {names} | {claim} | {_cell(summary)} |")
    return "\n".join(lines)


def readme_table(text: str) -> str | None:
    """The caveat table of a README's ``text`` (from :data:`HEADER` to the first blank
    line), or None when it has none."""
    if HEADER not in text:
        return None
    return (HEADER + text.split(HEADER, 1)[1]).split("\n\n", 1)[0].rstrip("\n")


def write_readme_table(path) -> bool:
    """Replace the caveat table of the README at ``path`` by :func:`caveat_table`; True if
    it changed."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    old = readme_table(text)
    if old is None:
        raise SystemExit(f"{path}: no caveat table (a line {HEADER!r})")
    new = caveat_table()
    if old == new:
        return False
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return True


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m privpub.caveats README.md")
    print("rewritten" if write_readme_table(sys.argv[1]) else "unchanged")
