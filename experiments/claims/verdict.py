"""A claim's verdict (``held`` / ``not held`` / ``not evaluated``) and its one-line summary,
also under the paper's reading and on the noise-free frame, and the group a deviation is
shown by (``docs/claims.md``, "Output" and "The paper's reading and the noise-free limit")."""

from __future__ import annotations

import json

import pandas as pd

from privpub.experiments.claims.kinds import evaluate_kind
from privpub.experiments.claims.numbers import group_text, plain, ratio_text
from privpub.experiments.claims.select import NotEvaluated, claim_subject, param_names

__all__ = ["evaluate_claims", "noise_free_frame"]

#: The parts of a claim's result kept for a variant evaluation (paper reading, noise-free).
_SUB_KEYS = ("verdict", "summary", "n_held", "n_groups", "n_skipped", "reason", "groups")


def _clean(g: dict) -> dict:
    """A group as output: no private keys, plain values."""
    out = {}
    for k, v in g.items():
        if k.startswith("_"):
            continue
        if isinstance(v, dict) and k != "group":
            v = {str(a): plain(b) for a, b in v.items()}
        out[k] = plain(v) if not isinstance(v, (dict, list)) else v
    out["held"] = bool(g["held"])
    return out


def _result(
    claim: dict,
    verdict: str,
    summary: str,
    groups=(),
    n_held=0,
    reason=None,
    n_skipped=0,
    worst: int | None = None,
) -> dict:
    return {
        "id": claim["id"],
        "text": claim["text"],
        "source": claim["source"],
        "kind": claim["kind"],
        "metric": claim.get("metric"),
        "plot": claim.get("plot"),
        "verdict": verdict,
        "summary": summary,
        "n_held": int(n_held),
        "n_groups": len(groups),
        "n_skipped": int(n_skipped),
        "tolerance": plain(claim["tolerance"]) if claim["tolerance"] else 0,
        "holds_in": claim["holds_in"],
        "deviation": claim.get("deviation"),
        "reason": reason,
        "groups": [_clean(g) for g in groups],
        "worst": worst,  # index of the group the summary names (worst, or closest if held)
    }


def _not_evaluated(claim: dict, reason: str, n_skipped: int = 0) -> dict:
    return _result(claim, "not evaluated", f"not evaluated: {reason}", reason=reason,
                   n_skipped=n_skipped)


def _judge(claim: dict, groups: list[dict], skipped: list[dict], describe) -> dict:
    """The verdict over the judged groups, with the summary naming the worst group."""
    n_held = sum(bool(g["held"]) for g in groups)
    n = len(groups)
    need = n if claim["holds_in"] == "all" else claim["holds_in"] * n
    verdict = "held" if n_held >= need - 1e-9 else "not held"
    worst = max(groups, key=lambda g: (not g["held"], g["_score"]))
    label = "closest" if worst["held"] else "worst"
    ratio = worst.get("ratio")
    summary = (
        f"held in {n_held} of {n} groups"
        + ("" if claim["holds_in"] == "all" else f" (needs {claim['holds_in']:.0%})")
        + f"; {label}: {group_text(worst['group'])}: {describe(worst)}"
        + (
            f" (ratio {ratio_text(ratio)}{getattr(describe, 'need', '')})"
            if ratio is not None
            else ""
        )
    )
    noise = [g["within_noise"] for g in groups if g.get("within_noise") is not None]
    if noise:
        summary += (
            f"; {sum(noise)} of {n - n_held} missed group(s) within two standard errors"
        )
    if skipped:
        summary += f"; {len(skipped)} group(s) skipped for missing numbers"
    result = _result(
        claim, verdict, summary, groups, n_held, n_skipped=len(skipped),
        worst=next(i for i, g in enumerate(groups) if g is worst),
    )
    if noise:
        result["n_missed_within_noise"] = int(sum(noise))
    return result


def _evaluate_one(claim: dict, frame: pd.DataFrame, plots) -> dict:
    try:
        if frame is None or frame.empty:
            raise NotEvaluated("no results")
        needed = [c for c in ("metric", "value") if c not in frame.columns]
        if needed:
            raise NotEvaluated(f"the results have no column(s) {needed}")
        groups, skipped, describe = evaluate_kind(claim, frame, param_names(frame), plots)
    except NotEvaluated as exc:
        return _not_evaluated(claim, str(exc))
    except Exception as exc:  # noqa: BLE001 - a claim never stops the drawing
        first = str(exc).splitlines()[0] if str(exc) else ""
        return _not_evaluated(claim, f"evaluation failed: {type(exc).__name__}: {first}")
    if not groups:
        reason = "no group has all the numbers"
        if skipped:
            first = skipped[0]
            reason += (
                f" (e.g. {group_text(first['group'])} lacks "
                f"{', '.join(map(str, first['missing']))})"
            )
        return _not_evaluated(claim, reason, n_skipped=len(skipped))
    return _judge(claim, groups, skipped, describe)


def _sub(result: dict, **extra) -> dict:
    """The parts of a claim's result kept for a variant evaluation (paper reading, noise-free)."""
    return {**extra, **{k: result.get(k) for k in _SUB_KEYS}}


def _with_reading(claim: dict) -> dict:
    """The claim with its ``series`` replaced by the ``paper_reading`` series (same other
    selector keys: ``{label: RPS, degree_bound: n_minus_1}`` becomes ``{label: <reading>,
    degree_bound: n_minus_1}``)."""
    out = dict(claim)
    series = {k: v for k, v in claim["series"].items() if k != "mechanism"}
    out["series"] = {**series, "label": claim["paper_reading"]}
    return out


def _series_keys(frame: pd.DataFrame) -> pd.Series:
    """One key per series: dataset, options, mechanism, label and every parameter but
    epsilon (a noise-free twin is its series' cell at the largest epsilon)."""

    def rest(text):
        try:
            return json.dumps(
                {k: v for k, v in json.loads(text).items() if k != "epsilon"}, sort_keys=True
            )
        except (TypeError, ValueError):
            return str(text)

    cols = [c for c in ("dataset", "dataset_options", "mechanism", "label") if c in frame]
    key = frame["params"].map(rest) if "params" in frame else pd.Series("", index=frame.index)
    for c in cols:
        key = key + "\x1f" + frame[c].astype(str)
    return key


def noise_free_frame(frame: pd.DataFrame, twins: pd.DataFrame) -> pd.DataFrame:
    """The results with every series that has noise-free twins replaced by its twins (the
    same code with every noise primitive drawing zero, at the series' largest epsilon);
    series without twins (non-private references, Mondrian) are kept as they are."""
    if twins is None or twins.empty or frame.empty:
        return frame.iloc[0:0]
    twins = twins[twins["metric"].isin(set(frame["metric"]))]
    if "status" in twins:
        twins = twins[twins["status"] == "ok"]
    if twins.empty:
        return frame.iloc[0:0]
    keys = set(_series_keys(twins))
    keep = ~_series_keys(frame).isin(keys).to_numpy()
    return pd.concat([frame[keep], twins[[c for c in frame.columns if c in twins.columns]]],
                     ignore_index=True)


def _matching(groups, wanted: dict | None, ignore=()):
    """The group of ``groups`` with the same values as ``wanted`` on every shared key
    except ``ignore``; None if none."""
    if not wanted:
        return None
    for g in groups or []:
        group = g.get("group") or {}
        if all(group.get(k) == v for k, v in wanted.items() if k not in ignore and k in group):
            return g
    return None


def _focus(result: dict) -> dict | None:
    """One group to show a deviation by: the claim's worst (or closest) group, with the
    paper reading's numbers in the same group and the noise-free numbers in the same group
    at the twins' epsilon."""
    groups = result.get("groups") or []
    if not groups:
        return None
    index = result.get("worst")
    worst = groups[index] if isinstance(index, int) and 0 <= index < len(groups) else groups[0]
    out = {k: worst.get(k) for k in ("group", "ours", "other", "ratio", "held", "than", "series")
           if worst.get(k) is not None}
    reading = result.get("paper_reading")
    if reading:
        g = _matching(reading.get("groups"), worst.get("group"))
        out["paper_reading"] = None if g is None else {
            k: g.get(k) for k in ("group", "ours", "other", "ratio", "held")}
    free = result.get("noise_free")
    if free:
        g = _matching(free.get("groups"), worst.get("group"), ignore=("epsilon",))
        out["noise_free"] = None if g is None else {
            k: g.get(k) for k in ("group", "ours", "other", "ratio", "held")}
    return out


def evaluate_claims(
    claims: list[dict], frame: pd.DataFrame, *, plots=None, twins: pd.DataFrame | None = None
) -> list[dict]:
    """Check parsed claims against tidy results; never raises on data problems.

    Parameters
    ----------
    claims : list of dict
        As returned by :func:`~privpub.experiments.claims.parse_claims`.
    frame : DataFrame
        The ok rows of the experiment (``metric != "release"``) with columns ``dataset``,
        ``dataset_options``, ``dataset_label``, ``mechanism``, ``label``, ``params``, one
        column per parameter, ``rep``, ``metric``, ``value`` (and ``seconds`` for tables of
        running times).
    plots : list of dict, optional
        The experiment's plots (``table`` claims read the named table plot).
    twins : DataFrame, optional
        The noise-free twin rows (``noise_free`` true, same columns): each claim is also
        evaluated with every series that has twins replaced by them (``noise_free``).

    Returns
    -------
    list of dict
        One JSON-serialisable dict per claim (``docs/claims.md``, "Output"): ``verdict``
        (``held`` / ``not held`` / ``not evaluated``), ``subject`` (what the claim tests:
        :func:`~privpub.experiments.claims.select.claim_subject`), a one-line ``summary``,
        ``n_held``, ``n_groups``, ``n_skipped``, ``reason`` (why it was not evaluated, else
        None) and
        ``groups`` with each group's ``ours``, ``other``, ``ratio`` and ``held``. A claim
        with ``paper_reading`` gets ``paper_reading``: the same evaluation with that series
        in place of ``series`` (``series``, ``verdict``, ``summary``, ``groups``...); with
        ``twins``, every claim but a table gets ``noise_free`` (the evaluation on the
        noise-free frame, or None when no compared series has twins); ``focus``: the worst
        group with the reading's and the noise-free numbers in the same group.
    """
    out = []
    free = None
    if twins is not None and not twins.empty and frame is not None and not frame.empty:
        free = noise_free_frame(frame, twins)
    for claim in claims:
        result = _evaluate_one(dict(claim), frame, plots)
        reading = claim.get("paper_reading")
        result["paper_reading"] = (
            _sub(_evaluate_one(_with_reading(claim), frame, plots), series=reading)
            if reading
            else None
        )
        result["noise_free"] = None
        if free is not None and not free.empty and claim["kind"] != "table":
            sub = _evaluate_one(dict(claim), free, plots)
            twin_eps = sorted({plain(e) for e in pd.to_numeric(
                twins.get("epsilon", pd.Series(dtype=float)), errors="coerce").dropna()})
            result["noise_free"] = _sub(sub, epsilon=twin_eps)
        result["focus"] = _focus(result)
        result["subject"] = claim_subject(claim)
        out.append(result)
    return out
