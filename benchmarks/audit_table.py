"""The full audit's table for docs/audit.md, generated from the stored audits (never typed).

    privpub audit --results-dir /tmp/audit-results --n-jobs 2        # the full audit
    python benchmarks/audit_table.py /tmp/audit-results                # markdown to stdout
    python benchmarks/audit_table.py /tmp/audit-results --save docs/audit-verdicts.json

Prints, per audited configuration (full audits before quick ones): the claim, the verdict,
the epsilon lower bound, the runs and seconds, whether it carries a caveat and how
the audit covers it (:func:`privpub.audit.blind_spots.caveat_coverage`), then the blind
spots' sentences. ``--save`` writes the records that the README caveat test reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from privpub.audit.blind_spots import caveat_coverage  # noqa: E402
from privpub.audit.stored import config_label, preferred, stored_audits  # noqa: E402
from privpub.registry import implied_central_epsilon  # noqa: E402


def _claim(record: dict) -> str:
    """The claimed epsilon; a local one with the central epsilon the audit tested."""
    eps = record["epsilon"]
    central = implied_central_epsilon(record["privacy"], eps)
    return f"{eps:g}" if central == eps else f"{eps:g} (central {central:g})"


def table(records: list[dict]) -> str:
    """The markdown table and the blind spots' sentences."""
    by_label = {config_label(r["mechanism"], r["config"]): r for r in preferred(records)}
    lines = ["| mechanism | configuration | claim | verdict | epsilon lower bound | runs | "
             "seconds | caveat | the audit and the caveat |",
             "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for c in caveat_coverage(records):
        r = by_label[c["label"]]
        config = config_label("", r["config"]).strip() or "defaults"
        bound = r.get("epsilon_lower_bound")
        witness = f" (witness `{r['witness_id']}`)" if r.get("witness_id") else ""
        lines.append(
            f"| `{r['mechanism']}` | {config} | {r['privacy']}, eps = {_claim(r)} | "
            f"{r['verdict']}{witness} | {'-' if bound is None else f'{bound:.2f}'} | "
            f"{r.get('samples') or '-'} | {r.get('seconds') or 0:.0f} | "
            f"{'yes' if c['caveat'] else 'none'} | {c['coverage']} |")
        if c["why"]:
            notes.append(f"- `{c['label']}`: {c['why']}")
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", type=Path)
    parser.add_argument("--save", type=Path, help="also write the records (JSON) here")
    args = parser.parse_args(argv)
    records = stored_audits(args.results_dir)
    if not records:
        print(f"no stored audits under {args.results_dir}", file=sys.stderr)
        return 1
    if args.save:
        keep = ("mechanism", "config", "mode", "privacy", "epsilon", "caveat", "verdict",
                "epsilon_lower_bound", "witness_id", "samples", "seconds")
        slim = [{k: r.get(k) for k in keep} for r in preferred(records)]
        slim.sort(key=lambda r: config_label(r["mechanism"], r["config"]))
        args.save.write_text(json.dumps(slim, indent=1, sort_keys=True) + "\n")
    print(table(records), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
