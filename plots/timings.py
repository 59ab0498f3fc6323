"""``results/timings.md``: what each experiment costs, per scale, from its ``meta.json``.

Per experiment and scale: trials, the sum of the trials' wall and CPU seconds (the work),
seconds per trial, the last run's wall time (the wait, with however many workers it had),
the largest per-worker peak memory, and the slowest cells. ``privpub list`` reads the same
numbers to say how long a scale will take.
"""

from __future__ import annotations

import json
from pathlib import Path

from privpub.results import SCALES

__all__ = ["write_timings", "timing_rows"]


def timing_rows(results_dir: Path) -> list[dict]:
    """One dict per experiment and scale that has a ``meta.json`` (variants left out)."""
    rows = []
    for meta_path in sorted(Path(results_dir).glob("*/*/meta.json")):
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict) or meta.get("variant"):
            continue
        rows.append(meta)
    order = {s: i for i, s in enumerate(SCALES)}
    return sorted(rows, key=lambda m: (str(m.get("paper")), str(m.get("experiment")),
                                       order.get(m.get("scale"), 9)))


def _s(value) -> str:
    if value is None:
        return "-"
    value = float(value)
    if value >= 60:
        return f"{value / 60:.1f} min"
    return f"{value:.3g} s"


def write_timings(results_dir: Path) -> Path:
    """Write ``results_dir/timings.md``; returns its path."""
    results_dir = Path(results_dir)
    lines = [
        "# Timings",
        "",
        "Work = the sum of the trials' wall (CPU) seconds; wait = the last run's wall time "
        "(with its n_jobs workers; a run that found everything stored waits only to draw). "
        "Peak memory is the largest resident memory of a worker during a trial.",
        "",
        "| paper | experiment | scale | trials | work | CPU | per trial | last run wait | "
        "peak MB | slowest cell |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    total: dict[str, float] = {}
    for meta in timing_rows(results_dir):
        seconds = meta.get("seconds") or {}
        slowest = (meta.get("slowest") or [{}])[0]
        slow = (f"{slowest['series']} on {slowest['dataset']} {slowest.get('params', '')}: "
                f"{_s(slowest['seconds'])}") if slowest else "-"
        wait = (meta.get("run") or {}).get("wall_seconds")
        peak = meta.get("peak_mb")
        lines.append(
            f"| {meta.get('paper') or ''} | {meta.get('experiment')} | {meta.get('scale')} | "
            f"{meta.get('trials')} | {_s(seconds.get('total'))} | {_s(seconds.get('cpu_total'))}"
            f" | {_s(seconds.get('per_trial'))} | {_s(wait)} | "
            f"{'-' if peak is None else f'{peak:.0f}'} | {slow.replace('|', '/')} |"
        )
        key = f"{meta.get('paper')} [{meta.get('scale')}]"
        total[key] = total.get(key, 0.0) + float(seconds.get("total") or 0.0)
    if total:
        lines += ["", "Work per paper and scale:", ""]
        lines += [f"- {key}: {_s(value)}" for key, value in sorted(total.items())]
    path = results_dir / "timings.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
