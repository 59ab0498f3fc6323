"""The report's "Deviations" rows: per paper, each claim our reproduction does not bear out,
or that states a known deviation or a paper-reading series, with our number, the paper's
reading, the noise-free limit, the verdicts and the cause.

Part of :mod:`privpub.plots.report`; the paper-reading and noise-free series are explained in
docs/design.md and docs/claims.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from .results_tree import Experiment, Run
from .text import SMOKE_SCALE, fmt, group_text, of_groups, scale_label, verdict

__all__ = ["DEV_INTRO", "Deviation", "deviations", "deviation_cells", "verdict_of", "cause_text"]

#: The paragraph above each paper's deviations table.
DEV_INTRO = (
    "Each claim our reproduction does not bear out, or that states a known deviation: our "
    "number (the worst group), the paper's reading of the method in the same group (a "
    "non-private series where the paper's analysis does not hold: never a DP result), the "
    "noise-free limit (the same code with every noise primitive drawing zero, at the "
    "largest ε), the verdicts and the one-line cause; the evidence is in the experiment's "
    "notes."
)


@dataclass
class Deviation:
    """One row of a paper's "Deviations" section: a claim of ``run`` that is not held, or
    that states a known deviation (``deviation:``) or a paper-reading series."""

    experiment: Experiment
    run: Run
    claim: dict

    @property
    def focus(self) -> dict:
        focus = self.claim.get("focus")
        return focus if isinstance(focus, dict) else {}


def _is_deviation(claim: dict) -> bool:
    return (
        verdict(claim) == "not held"
        or bool(claim.get("deviation"))
        or bool(claim.get("paper_reading"))
    )


def deviations(experiments: list[Experiment]) -> list[Deviation]:
    """Every deviation row of ``experiments``, from each experiment's most complete run
    (paper scale if drawn, else small, ...; never smoke: toy data), in report order."""
    out = []
    for exp in experiments:
        run = next((r for r in exp.runs if r.scale != SMOKE_SCALE and r.claims), None)
        if run is None:
            continue
        out += [Deviation(exp, run, c) for c in run.claims if _is_deviation(c)]
    return out


def verdict_of(sub) -> str:
    """The verdict of a claim's ``paper_reading`` or ``noise_free`` entry."""
    return verdict(sub) if isinstance(sub, dict) else "not evaluated"


def _pair_text(kind, d: dict | None, than=None) -> str:
    """A group's numbers as a claim of ``kind`` compares them."""
    if not d or d.get("ours") is None:
        return "–"
    ours, other = fmt(d.get("ours")), fmt(d.get("other"))
    if kind == "value" or kind == "table":
        return f"{ours} (paper {other})"
    if kind == "bound":
        return f"{ours} (bound {other})"
    if kind == "trend":
        return f"{other} → {ours}"
    rival = d.get("than") or than
    return f"{ours} vs {rival} {other}" if rival else f"{ours} vs {other}"


def _reading_text(c: dict, f: dict, kind: str) -> str:
    """The paper's reading of the method in the focus group (``–`` when the claim has none)."""
    reading = c.get("paper_reading")
    if not isinstance(reading, dict):
        return "–"
    head = str(reading.get("series") or "paper's reading")
    if f.get("paper_reading"):
        text = _pair_text(kind, f["paper_reading"], f.get("than"))
    else:
        text = str(reading.get("summary") or reading.get("reason") or "–")
    if reading.get("n_groups"):
        text += f"; held in {of_groups(reading)}"
    return f"{head}: {text}"


def _noise_free_text(c: dict, f: dict, kind: str) -> str:
    """The noise-free limit in the focus group (``–`` when the claim has none)."""
    free = c.get("noise_free")
    if not isinstance(free, dict):
        return "–"
    nf = f.get("noise_free")
    if nf:
        eps = (nf.get("group") or {}).get("epsilon")
        if eps is None and isinstance(free.get("epsilon"), list) and free["epsilon"]:
            eps = free["epsilon"][-1] if len(free["epsilon"]) == 1 else None
        text = _pair_text(kind, nf, f.get("than"))
        text += f" at ε={fmt(eps)}" if eps is not None else ""
    elif verdict_of(free) == "not evaluated":
        reason = str(free.get("reason") or "")
        text = "– (" + (reason[:70] + "…" if len(reason) > 70 else reason) + ")"
    else:
        text = str(free.get("summary") or "–")
    return text


def deviation_cells(dev: Deviation) -> dict:
    """The texts of one deviation row: ``claim``, ``ours``, ``reading``, ``noise_free``,
    ``verdict`` (ours, and the reading's and noise-free verdicts), ``cause``."""
    c, f = dev.claim, dev.focus
    kind = str(c.get("kind") or "")
    group = group_text(f.get("group")) if f.get("group") else ""
    ours = _pair_text(kind, f)
    if group:
        ours += f" [{group}]"
    ours += f"; held in {of_groups(c)}" if c.get("n_groups") else ""
    verdicts = [f"ours: {verdict(c)}"]
    if isinstance(c.get("paper_reading"), dict):
        verdicts.append(f"reading: {verdict_of(c['paper_reading'])}")
    if isinstance(c.get("noise_free"), dict):
        verdicts.append(f"noise-free: {verdict_of(c['noise_free'])}")
    return {
        "claim": f"{c.get('id', '?')}: {c.get('text') or ''}",
        "where": f"{dev.experiment.name} [{scale_label(dev.run.scale)}]",
        "ours": ours,
        "reading": _reading_text(c, f, kind),
        "noise_free": _noise_free_text(c, f, kind),
        "verdict": "; ".join(verdicts),
        "cause": cause_text(c) or "–",
    }


def cause_text(c: dict) -> str:
    """Why a claim's verdict differs from the paper, in one line: its stated deviation,
    else the computed noise test of a missed claim, else ``no cause stated`` for a claim
    not held; empty for a claim that holds as the paper says."""
    return str(c.get("deviation") or _noise_cause(c)
               or ("no cause stated" if verdict(c) == "not held" else ""))


def _noise_cause(c: dict) -> str | None:
    """The computed noise test of a missed claim (docs/claims.md, ``n_missed_within_noise``):
    how many missed groups are within two standard errors of holding."""
    k = c.get("n_missed_within_noise")
    missed = int(c.get("n_groups") or 0) - int(c.get("n_held") or 0)
    if k is None or missed <= 0:
        return None
    if k == missed:
        which = "the missed group is" if missed == 1 else f"all {missed} missed groups are"
        return f"noise (computed): {which} within two standard errors of holding"
    rest = missed - k
    return (f"computed: {k} of {missed} missed groups are within two standard errors of "
            f"holding; {rest} {'is' if rest == 1 else 'are'} beyond (a real difference)")
