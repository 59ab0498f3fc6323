"""Compare two results directories value by value: the check that a refactor changed no result.

Every experiment store (``<dir>/<experiment>/<scale>/store``) of the first directory is read
with :class:`privpub.experiments.store.ResultStore` (each trial's latest attempt) and matched,
row by row, with the same store of the second: one row per (cell, base seed, repetition, metric).
Compared exactly (NaN equals NaN, released vectors byte for byte): the metric value, the
status, the privacy columns (notion, caveat, epsilon spent, ledger, verified), the label and
parameters, the released vector, and the error or skip reason (with its ``(at file:line)``
suffix left out, since moving code moves lines). Not compared: what measures the run rather
than the result (times, memory, ``written_at``, ``code_hash``, ``code_version``,
``release_cached``). The claims' verdicts and numbers (``claims.json`` of every figure
directory) are compared too.

    python benchmarks/compare_stores.py /tmp/before /tmp/after          # exit 1 on a difference
    python benchmarks/compare_stores.py /tmp/before /tmp/after --json   # machine-readable
    python benchmarks/compare_stores.py /tmp/before /tmp/after --renamed diag/=info/
        # rows (and claims) renamed on purpose: "diag/<key>" after is "info/<key>" before

Make the two directories with the same command on the two commits, e.g.
``python run.py -m 'experiment=glob(*)' scale=smoke results_dir=/tmp/before n_jobs=2``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from privpub.experiments.store import ResultStore  # noqa: E402

#: What identifies a row across the two directories.
ROW_KEY = ("cell", "base_seed", "rep", "metric")
#: Columns that describe the run, not its result.
VOLATILE = {
    "seconds", "task_seconds", "cpu_seconds", "peak_mb", "written_at", "code_hash",
    "code_version", "release_cached",
}
_AT = re.compile(r" \(at [^()]+:\d+\)")


def stores(root: Path) -> dict[str, Path]:
    """``"<experiment>/<scale>" -> store directory`` under a results directory."""
    return {
        f"{p.parent.parent.name}/{p.parent.name}": p
        for p in sorted(root.glob("*/*/store"))
        if p.is_dir()
    }


def _comparable(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns=[c for c in frame.columns if c in VOLATILE])
    if "error" in frame.columns:
        frame["error"] = frame["error"].map(
            lambda e: _AT.sub("", e) if isinstance(e, str) else e
        )
    return frame.set_index(list(ROW_KEY)).sort_index()


def _equal(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (np.isnan(a) and np.isnan(b)) or a == b
    if a is None or (isinstance(a, float) and np.isnan(a)):
        return b is None or (isinstance(b, float) and np.isnan(b))
    if isinstance(a, (bytes, bytearray)) or isinstance(b, (bytes, bytearray)):
        return bytes(a) == bytes(b) if isinstance(b, (bytes, bytearray)) else False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _renamed(frame: pd.DataFrame, renames) -> pd.DataFrame:
    """``frame`` with every ``metric`` starting with a NEW prefix read as its OLD one."""
    if frame.empty or not renames:
        return frame
    metric = frame["metric"].astype(str)
    for new, old in renames:
        metric = metric.where(~metric.str.startswith(new), old + metric.str[len(new):])
    return frame.assign(metric=metric)


def compare_store(before: Path, after: Path, renames=()) -> dict:
    """The differences between two stores of one experiment and scale."""
    a = _comparable(ResultStore(before).load(statuses=None))
    b = _comparable(_renamed(ResultStore(after).load(statuses=None), renames))
    only_a = a.index.difference(b.index)
    only_b = b.index.difference(a.index)
    common = a.index.intersection(b.index)
    columns = sorted(set(a.columns) | set(b.columns))
    diffs = []
    for column in columns:
        if column not in a.columns or column not in b.columns:
            present = a if column in a.columns else b
            if present.loc[common, column].notna().any():
                diffs.append({"column": column, "rows": len(common), "example": "column missing"})
            continue
        left, right = a.loc[common, column].to_numpy(), b.loc[common, column].to_numpy()
        bad = [i for i in range(len(common)) if not _equal(left[i], right[i])]
        if bad:
            i = bad[0]
            diffs.append({"column": column, "rows": len(bad),
                          "example": f"{common[i]}: {left[i]!r} != {right[i]!r}"[:300]})
    return {"rows": len(a), "compared": len(common), "only_before": len(only_a),
            "only_after": len(only_b), "differences": diffs,
            "values": int((a.index.get_level_values("metric") != "release").sum())}


def _close(a, b, rel: float = 1e-12) -> bool:
    """Equal JSON, floats equal to ``rel`` (a mean summed in another row order)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (np.isnan(a) and np.isnan(b)) or abs(a - b) <= rel * max(abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], rel) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, rel) for x, y in zip(a, b, strict=True))
    return a == b


def compare_claims(before: Path, after: Path, names, renames=(),
                   rounding: list | None = None) -> list[str]:
    """Claims whose verdict, numbers or text differ (``claims.json`` under both dirs), for
    the stores ``names`` (``"<experiment>/<scale>"``). Files whose numbers differ only in the
    last digits (relative 1e-12: stores written before rows loaded in one canonical order
    summed them in the order their trials finished) are appended to ``rounding`` instead."""
    out = []
    for path in sorted(before.rglob("claims.json")):
        rel = path.relative_to(before).parts
        if ".hydra" in rel or "/".join(rel[:2]) not in names:
            continue
        twin = after / path.relative_to(before)
        if not twin.is_file():
            out.append(f"{path.relative_to(before)}: missing after")
            continue
        text = twin.read_text()
        for new, old in renames:  # metric names also appear inside the claims' texts
            text = text.replace(new, old)
        left, right = json.loads(path.read_text()), json.loads(text)
        if left != right:
            if rounding is not None and _close(left, right):
                rounding.append(str(path.relative_to(before)))
            else:
                out.append(f"{path.relative_to(before)}: differs")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--common", action="store_true",
                        help="compare only the stores (and claims files) both directories have")
    parser.add_argument("--scale", help="compare only this scale (smoke, small, paper)")
    parser.add_argument("--renamed", action="append", default=[], metavar="NEW=OLD",
                        help="read metric names (and claims' strings) starting with NEW in "
                        "the second directory as starting with OLD (a deliberate rename)")
    args = parser.parse_args(argv)
    renames = [tuple(r.split("=", 1)) for r in args.renamed]
    left, right = stores(args.before), stores(args.after)
    if args.scale:
        left = {k: v for k, v in left.items() if k.endswith(f"/{args.scale}")}
        right = {k: v for k, v in right.items() if k.endswith(f"/{args.scale}")}
    if args.common:
        left = {k: v for k, v in left.items() if k in right}
        right = {k: v for k, v in right.items() if k in left}
    report = {"stores": {}, "missing_after": sorted(set(left) - set(right)),
              "missing_before": sorted(set(right) - set(left))}
    for name in sorted(set(left) & set(right)):
        report["stores"][name] = compare_store(left[name], right[name], renames)
    report["claims_rounding"] = []
    report["claims"] = compare_claims(args.before, args.after, set(left), renames,
                                      report["claims_rounding"])
    same = not (report["missing_after"] or report["missing_before"] or report["claims"]) and all(
        not (s["only_before"] or s["only_after"] or s["differences"])
        for s in report["stores"].values()
    )
    if args.json:
        print(json.dumps(report, indent=1, default=str))
    else:
        for name, s in report["stores"].items():
            state = "identical" if not (s["only_before"] or s["only_after"] or s["differences"]) \
                else "DIFFERENT"
            print(f"{name}: {s['compared']} of {s['rows']} rows compared "
                  f"({s['values']} metric values), {state}")
            if s["only_before"] or s["only_after"]:
                print(f"  rows only before: {s['only_before']}, only after: {s['only_after']}")
            for d in s["differences"]:
                print(f"  {d['column']}: {d['rows']} row(s) differ, e.g. {d['example']}")
        for name in report["missing_after"]:
            print(f"{name}: missing after")
        for name in report["missing_before"]:
            print(f"{name}: missing before")
        for line in report["claims"]:
            print(f"claims {line}")
        if report["claims_rounding"]:
            print(f"claims files equal to relative 1e-12 but not to the last bit "
                  f"(summation order): {len(report['claims_rounding'])}")
        n_values = sum(s["values"] for s in report["stores"].values())
        n_claims = sum(1 for p in args.before.rglob("claims.json")
                       if "/".join(p.relative_to(args.before).parts[:2]) in left)
        print(f"{len(report['stores'])} stores, {n_values} metric values, {n_claims} claims files: "
              + ("identical" if same else "DIFFERENT"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
