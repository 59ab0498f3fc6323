"""The ``privpub`` console script: run experiments, discover them, check the data,
reproduce papers, show what a name is.

Subcommands: ``run`` (the Hydra app, :mod:`privpub.experiments.app`: the same command as
``python run.py``), ``list`` (every experiment: figure, datasets, trials and time per scale),
``data`` (every data file: present / missing / corrupt), ``reproduce`` (runs the multirun
that regenerates a paper, after printing it, its expected time and any missing data),
``show`` (:mod:`privpub.experiments.show`), ``leaderboard``
(:mod:`privpub.experiments.leaderboard`) and ``audit`` (:mod:`privpub.experiments.audit`).
Every subcommand takes the top-level ``key=value`` overrides of conf/config.yaml that apply
to it, in any order with its flags (:func:`parse_args`). Heavy modules (the data layer, the
registry) are imported only by the subcommands that need them, so ``privpub --help`` is
fast. Usage: README.md ("Discover and reproduce"); design: docs/design.md (Experiments:
"Start-up", "One way in").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import sys
from pathlib import Path

from privpub.experiments import audit, catalog
from privpub.experiments.catalog import CHECKOUT, figure_of, paper_of
from privpub.results import SCALES, experiment_scales

__all__ = ["main", "parse_args", "experiment_table", "reproduce_command", "figure_of",
           "count_trials", "dataset_statuses"]

#: Exit codes: 0 ok, 1 data missing / run failed, 2 usage or config error.
EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


# --------------------------------------------------------------------------- helpers
def _short_title(title: str, paper: str, figure: str) -> str:
    """Drop a leading ``"<paper> <figure>: "`` (the columns already say it)."""
    for prefix in (f"{paper} {figure}: ", f"{paper} {figure}. ", f"{paper} {figure} "):
        if title.startswith(prefix):
            return title[len(prefix):]
    return title


def _read_meta(results_dir: Path, name: str, scale: str) -> dict | None:
    path = results_dir / name / scale / "meta.json"
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    seconds = meta.get("seconds") if isinstance(meta, dict) else None
    if not isinstance(seconds, dict):
        return None
    out = {k: seconds.get(k) for k in ("total", "per_trial")}
    out["trials"] = meta.get("trials")
    return out


def _expected_seconds(meta: dict | None, trials: int | None) -> float | None:
    """per_trial x the current trial count; else the measured total."""
    if not meta:
        return None
    per_trial, total = meta.get("per_trial"), meta.get("total")
    if isinstance(per_trial, (int, float)) and trials is not None:
        return float(per_trial) * trials
    if isinstance(total, (int, float)):
        return float(total)
    return None


def _fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 60:
        return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"
    if s < 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def _data_dir_origin(data_dir: str | None) -> str:
    if data_dir:
        return "--data-dir"
    if os.environ.get("PRIVPUB_DATA_DIR"):
        return "$PRIVPUB_DATA_DIR"
    return "user cache dir; set PRIVPUB_DATA_DIR or pass --data-dir"


def _table(rows: list[list[str]], header: list[str], right: set[int] = frozenset(),
           indent: str = "") -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(r):
        cells = [str(c).rjust(w) if i in right else str(c).ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        return (indent + "  ".join(cells)).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


# --------------------------------------------------------------------------- list
def experiment_table(
    *,
    conf_dir: str | os.PathLike | None = None,
    results_dir: str | os.PathLike = "results",
    data_dir: str | None = None,
    paper: str | None = None,
    scales: tuple[str, ...] = SCALES,
) -> dict:
    """Everything ``privpub list`` shows, as a JSON-ready dict.

    ``{"data_dir", "data_dir_origin", "results_dir", "warnings", "experiments": [{name, paper,
    figure, title, file, error, scales: {scale: {trials, cells, repetitions, datasets: [{name,
    synthetic, status}], data_ready, missing, measured, expected_seconds, error}}}]}``.
    A failing resolution is that scale's ``error``; the other rows are still filled.
    """
    from privpub.data import resolve_data_dir

    conf = catalog.conf_dir(None if conf_dir is None else str(conf_dir))
    results = Path(results_dir)
    warnings: list[str] = []
    entries = _listed_experiments(conf, paper)
    needed = _fill_scales(entries, scales, conf, results, warnings)
    _fill_data(entries, needed, data_dir)
    return {
        "data_dir": str(resolve_data_dir(data_dir)),
        "data_dir_origin": _data_dir_origin(data_dir),
        "results_dir": str(results),
        "warnings": warnings,
        "experiments": [item for item, _ in entries],
    }


def _listed_experiments(conf: Path, paper: str | None) -> list[tuple[dict, dict | None]]:
    """(row, experiment) of every experiment file (of ``paper``, when given)."""
    entries, papers = [], set()
    for path, exp, error in catalog.load_experiments(conf):
        name = (exp or {}).get("name") or path.stem
        item = {
            "name": name,
            "paper": paper_of(name, exp or {}),
            "figure": figure_of(name, exp or {}),
            "title": str((exp or {}).get("title") or ""),
            "file": str(path),
            "error": error,
            "scales": {},
        }
        papers.add(item["paper"])
        if paper and item["paper"] != paper:
            continue
        entries.append((item, exp))
    if paper and not entries:
        raise SystemExit(f"privpub: no experiment for paper {paper!r}; "
                         f"papers: {', '.join(sorted(papers))}")
    return entries


_COUNTS = ("trials", "cells", "repetitions", "error")


def _fill_scales(entries, scales, conf: Path, results: Path, warnings: list) -> dict:
    """Fill every row's trial counts (from the cache while no config or source changed) and
    measured times; return the dataset names per (experiment, scale)."""
    cache_file = results / ".cache" / f"list-{_source_key(conf)}.json"
    try:
        cached = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cached = {}
    fresh, needed = {}, {}
    loaded = []

    def load_once():  # a broken plugin module is one line, not N row errors
        if not loaded:
            loaded.append(True)
            try:
                from privpub.registry import load_plugins

                load_plugins()
            except Exception as exc:
                warnings.append(f"loading the mechanism/metric modules failed: "
                                f"{type(exc).__name__}: {exc}")

    for item, exp in entries:
        for scale in scales if exp is not None else ():
            if scale not in experiment_scales(exp):
                continue  # an experiment runs at an opt-in scale only with a block for it
            key = f"{item['name']}/{scale}"
            hit = cached.get(key)
            fresh[key] = ({k: hit[k] for k in (*_COUNTS, "datasets")} if hit is not None
                          else count_trials(exp, scale, before=load_once))
            row = {k: fresh[key][k] for k in _COUNTS}
            meta = _read_meta(results, item["name"], scale)
            row["measured"] = meta
            row["expected_seconds"] = _expected_seconds(meta, row["trials"])
            needed[(item["name"], scale)] = fresh[key]["datasets"]
            item["scales"][scale] = row
    if fresh and fresh != {k: cached.get(k) for k in fresh} and not warnings:
        with contextlib.suppress(OSError):
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            cache_file.write_text(json.dumps({**cached, **fresh}))
    return needed


def count_trials(exp: dict, scale: str, *, before=None) -> dict:
    """``{trials, cells, repetitions, error, datasets}`` of an experiment at ``scale``,
    counted as the runner counts them (:func:`privpub.experiments.spec.resolve_experiment`); a
    failing resolution gives its ``error`` and the datasets the YAML names."""
    from privpub.experiments.spec import resolve_experiment

    if before is not None:
        before()
    try:
        spec = resolve_experiment(exp, scale=scale)
    except Exception as exc:  # one row's error, the listing goes on
        return {"trials": None, "cells": None, "repetitions": None,
                "error": f"{type(exc).__name__}: {exc}",
                "datasets": catalog.scale_datasets(exp, scale)}
    return {"trials": len(spec.cells) * spec.repetitions, "cells": len(spec.cells),
            "repetitions": spec.repetitions, "error": None,
            "datasets": list(dict.fromkeys(c.dataset for c in spec.cells))}


def _fill_data(entries, needed: dict, data_dir: str | None) -> None:
    """Every row's datasets with their status (synthetic, present, missing, corrupt,
    unknown), every real file hash-checked once."""
    status = dataset_statuses(sorted({n for names in needed.values() for n in names}),
                              data_dir=data_dir)
    for item, _ in entries:
        for scale, row in item["scales"].items():
            ds = [{"name": n, "synthetic": status[n][0], "status": status[n][1]}
                  for n in needed[(item["name"], scale)]]
            row["datasets"] = ds
            row["missing"] = [d["name"] for d in ds
                              if d["status"] not in ("present", "synthetic")]
            row["data_ready"] = not row["missing"]


def dataset_statuses(names, *, data_dir: str | None) -> dict[str, tuple[bool | None, str]]:
    """name -> (synthetic or None when unknown, status): ``synthetic``, ``present``,
    ``missing``, ``corrupt`` or ``unknown``."""
    from privpub.data import file_status, get_dataset_spec

    synthetic = {}
    for n in names:
        try:
            synthetic[n] = get_dataset_spec(n).synthetic
        except Exception:
            synthetic[n] = None
    real = [n for n in names if synthetic[n] is not None and not synthetic[n]]
    statuses = file_status(real, data_dir=data_dir)
    bad_by_dataset: dict[str, list[str]] = {}
    for st in statuses:
        if not st.ok:
            for d in st.datasets:
                bad_by_dataset.setdefault(d, []).append(st.status)

    def status(n: str) -> str:
        if synthetic[n] is None:
            return "unknown"
        if synthetic[n]:
            return "synthetic"
        bad = bad_by_dataset.get(n)
        return "present" if not bad else ("corrupt" if "corrupt" in bad else "missing")

    return {n: (synthetic[n], status(n)) for n in names}


def _source_key(conf: Path) -> str:
    """What trial counts depend on: the config files and the project's Python sources (their
    sizes and modification times), so ``privpub list`` answers from its cache until one
    changes."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(conf.rglob("*.yaml")):
        digest.update(path.read_bytes())
    packages = ("experiments", "", "mechanisms", "baselines", "metrics")
    sources = {p for package in packages  # a wheel nests them all in privpub/: once each
               for p in catalog.source_path(f"privpub.{package}".rstrip(".")).rglob("*.py")}
    for path in sorted(sources):
        stat = path.stat()
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _data_cell(row: dict) -> str:
    ds = row.get("datasets") or []
    if not ds:
        return "-"
    if all(d["status"] == "synthetic" for d in ds):
        return "synthetic"
    if row["missing"]:
        by_status: dict[str, list[str]] = {}
        for d in ds:
            if d["name"] in row["missing"]:
                by_status.setdefault(d["status"], []).append(d["name"])
        real = [d for d in ds if d["status"] != "synthetic"]
        if len(by_status) == 1 and len(row["missing"]) == len(real) > 1:
            return f"{next(iter(by_status))}: all {len(real)} real"  # named in `datasets`
        return "; ".join(f"{k}: {', '.join(v)}" for k, v in by_status.items())
    return "present"


def _print_list(table: dict, scales: tuple[str, ...], out) -> None:
    header = ["experiment", "figure", "scale", "trials", "cells x reps", "time", "data",
              "datasets"]
    right = {3, 4, 5}
    blocks = []  # (paper, rows of the experiment, notes printed under them)
    for item in table["experiments"]:
        rows, notes = [], []
        title = _short_title(item["title"], item["paper"], item["figure"])
        if item["error"]:
            rows.append([item["name"], item["figure"], "", "", "", "", "", ""])
            notes.append(f"ERROR {item['error']}")
        for i, scale in enumerate(s for s in (scales if not item["error"] else ())
                                  if s in item["scales"]):  # an opt-in scale it lacks: none
            row = item["scales"][scale]
            if row["error"]:
                trials, cxr = "error", ""
                notes.append(f"{scale}: {row['error']}")
            else:
                trials, cxr = f"{row['trials']:,}", f"{row['cells']:,} x {row['repetitions']}"
            rows.append([item["name"] if i == 0 else "", item["figure"] if i == 0 else "",
                         scale, trials, cxr, _fmt_seconds(row["expected_seconds"]),
                         _data_cell(row), ", ".join(d["name"] for d in row["datasets"])])
        if rows or notes:  # none: the experiment has no block for the opt-in scale asked
            blocks.append((item["paper"], rows, [title, *notes] if title else notes))

    all_rows = [header, *(r for _, rows, _ in blocks for r in rows)]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(header))]
    pad = " " * (2 + widths[0] + 2)

    def line(r):
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        return ("  " + "  ".join(cells)).rstrip()

    print(f"data dir: {table['data_dir']} ({table['data_dir_origin']})", file=out)
    print(f"results dir: {table['results_dir']} (time = measured seconds per trial x trials; "
          "- = not measured yet)", file=out)
    for warning in table.get("warnings", []):
        print(f"WARNING: {warning}", file=out)
    papers = sorted({p for p, _, _ in blocks})
    if not papers and table["experiments"]:
        print(f"no experiment runs at {', '.join(scales)} (`privpub leaderboard --scale "
              f"{scales[-1]}` runs the tasks that do)", file=out)
    for paper in papers:
        mine = [(rows, notes) for p, rows, notes in blocks if p == paper]
        print(f"\n{paper}  ({len(mine)} experiment{'s' if len(mine) != 1 else ''})", file=out)
        print(line(header), file=out)
        print(line(["-" * w for w in widths]), file=out)
        for rows, notes in mine:
            for r in rows:
                print(line(r), file=out)
            for note in notes:
                print(pad + note, file=out)


def _cmd_list(args, out) -> int:
    scales = (args.scale,) if args.scale else SCALES
    table = experiment_table(conf_dir=args.conf_dir, results_dir=args.results_dir,
                             data_dir=args.data_dir, paper=args.paper, scales=scales)
    if args.json:
        json.dump(table, out, indent=2)
        print(file=out)
    else:
        _print_list(table, scales, out)
    return EXIT_OK


# --------------------------------------------------------------------------- data
def _status_table(statuses, out) -> None:
    rows = [[st.dataset, st.path, st.status, str(st.expected_path)] for st in statuses]
    print("\n".join(_table(rows, ["dataset(s)", "file", "status", "expected path"])), file=out)
    counts: dict[str, int] = {}
    for st in statuses:
        counts[st.status] = counts.get(st.status, 0) + 1
    print(f"{len(statuses)} file(s): "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())), file=out)


def _cmd_data(args, out) -> int:
    from privpub.data import (
        check_dataset_files,
        dataset_names,
        file_status,
        get_dataset_spec,
        resolve_data_dir,
    )
    from privpub.data.files import ensure_file
    from privpub.errors import DataError

    root = resolve_data_dir(args.data_dir)
    real = [n for n in dataset_names() if not get_dataset_spec(n).synthetic]
    statuses = file_status(real, data_dir=root)
    fetched, failed = [], []
    if args.download:
        for st in statuses:
            if st.status != "missing":
                continue
            if not st.download_url:
                failed.append((st, f"no direct download; obtain it from {st.url}"))
                continue
            print(f"fetching {st.path} from {st.download_url} ...", file=out, flush=True)
            try:
                ensure_file(st.spec, data_dir=root, allow_download=True, dataset=st.datasets[0])
                fetched.append(st)
            except DataError as exc:
                failed.append((st, str(exc)))
        statuses = file_status(real, data_dir=root)

    if args.json:
        json.dump({"data_dir": str(root), "files": [s.to_dict() for s in statuses],
                   "downloaded": [s.path for s in fetched],
                   "not_downloaded": [{"path": s.path, "reason": r} for s, r in failed]},
                  out, indent=2)
        print(file=out)
    else:
        print(f"data dir: {root}  ({_data_dir_origin(args.data_dir)})"
              + ("" if root.is_dir() else "  -- does not exist"), file=out)
        _status_table(statuses, out)
        if args.download:
            print(f"downloaded {len(fetched)} file(s)" + (
                ": " + ", ".join(s.path for s in fetched) if fetched else ""), file=out)
            for st, reason in failed:
                print(f"not downloaded: {st.path}: {reason}", file=out)
        if any(not s.ok for s in statuses):
            try:
                check_dataset_files(real, data_dir=root)
            except DataError as exc:
                print("\n" + str(exc), file=out)
    return EXIT_OK if all(s.ok for s in statuses) else EXIT_PROBLEMS


# --------------------------------------------------------------------------- reproduce
def reproduce_command(papers, scale: str, overrides=()) -> list[str]:
    """The multirun that regenerates every figure and table of ``papers`` (a paper key, a
    list of them, or ``all``): ``privpub run -m ...`` (``python run.py -m ...`` in a
    checkout is the same command)."""
    papers = [papers] if isinstance(papers, str) else list(papers)
    if papers == ["all"]:
        pattern = "glob(*,exclude=default)"
    elif len(papers) == 1:
        pattern = f"glob({papers[0]}_*)"
    else:
        pattern = f"glob([{','.join(f'{p}_*' for p in papers)}])"
    return ["privpub", "run", "-m", f"experiment={pattern}", f"scale={scale}", *overrides]


def _cmd_reproduce(args, out) -> int:
    conf = catalog.conf_dir(args.conf_dir)
    exps = [(p, e) for p, e, _ in catalog.load_experiments(conf)]
    papers = sorted({paper_of((e or {}).get("name") or p.stem, e or {}) for p, e in exps})
    chosen = list(dict.fromkeys(args.papers))
    if "all" in chosen and len(chosen) > 1:
        print("privpub: reproduce all takes no other paper", file=sys.stderr)
        return EXIT_USAGE
    if chosen == ["all"]:
        mine = [p.stem for p, _ in exps if p.stem != "default"]
    else:
        mine = []
        for paper in chosen:
            found = [p.stem for p, _ in exps if p.stem.startswith(f"{paper}_")]
            if not found:
                print(f"privpub: no experiment file conf/experiment/{paper}_*.yaml; papers: "
                      f"{', '.join(papers)} (or all)", file=sys.stderr)
                return EXIT_USAGE
            mine += found
    cmd = reproduce_command(chosen, args.scale, args.overrides)
    print(shlex.join(cmd), file=out)
    print(f"# {len(mine)} experiment(s): {', '.join(mine)}", file=out)
    if args.print_only:
        return EXIT_OK
    missing, measured = _missing_data_and_time(args, set(mine))
    print(f"# expected time: {expected_time(chosen, args.scale)}"
          + (f"; the last runs here: {_fmt_seconds(measured)} of work" if measured else ""),
          file=out)
    if missing:
        print(f"# not run: data missing or corrupt: {', '.join(missing)} "
              "(`privpub data` names the files and URLs; `privpub data --download` fetches "
              "those with a direct URL)", file=out)
        return EXIT_PROBLEMS
    print("# data: every file present", file=out)
    out.flush()
    from privpub.experiments import app

    with contextlib.redirect_stdout(out):
        return app.run(cmd[2:], prog="privpub run")


def expected_time(papers, scale: str, timings: Path | None = None) -> str:
    """What docs/timings.md measured for ``papers`` (a key, a list of keys or ``all``) at
    ``scale`` (from an empty store and with everything stored, 2 cores), or a sentence
    saying it has no such row. The five seed papers together are its row "all five". The
    table comes with the source checkout: installed from a wheel, the times are not
    measured."""
    from privpub.papers import SEED_PAPERS

    if timings is None and CHECKOUT is None:
        return ("not measured for this installation (docs/timings.md, measured on the "
                "project's 2-core machine, is in the source checkout)")
    timings = timings or CHECKOUT / "docs" / "timings.md"
    papers = [papers] if isinstance(papers, str) else list(papers)
    key = "all five" if set(papers) == set(SEED_PAPERS) else " + ".join(papers)
    try:
        lines = timings.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    for line in lines:
        cells = [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0] == key and cells[1] == scale:
            return (f"{cells[3]} from an empty store, {cells[4]} with everything stored "
                    "(docs/timings.md, 2 cores)")
    return f"not measured at scale={scale} (docs/timings.md has no row for {key})"


def _missing_data_and_time(args, names: set[str]) -> tuple[list[str], float | None]:
    """The datasets the experiments ``names`` need at ``args.scale`` that are not present,
    and the seconds of work their last runs in the results directory took (None: none)."""
    given = dict(o.split("=", 1) for o in args.overrides if "=" in o)
    table = experiment_table(conf_dir=args.conf_dir, data_dir=given.get("data_dir"),
                             results_dir=given.get("results_dir", "results"),
                             paper=(args.papers[0] if len(args.papers) == 1
                                    and args.papers[0] != "all" else None),
                             scales=(args.scale,))
    rows = [e["scales"].get(args.scale) or {} for e in table["experiments"]
            if e["name"] in names]
    missing = [d for row in rows for d in row.get("missing") or []]
    seconds = [row["expected_seconds"] for row in rows if row.get("expected_seconds")]
    return list(dict.fromkeys(missing)), (sum(seconds) if seconds else None)


# --------------------------------------------------------------------------- show
def _cmd_show(args, out) -> int:
    from privpub.errors import PrivpubError
    from privpub.experiments.show import ShowContext, UnknownName, describe, render
    from privpub.registry import import_plugins

    try:
        import_plugins(args.plugins)
    except PrivpubError as exc:
        print(f"privpub show: {exc}", file=sys.stderr)
        return EXIT_USAGE
    ctx = ShowContext(conf=catalog.conf_dir(args.conf_dir), results_dir=args.results_dir,
                      data_dir=args.data_dir)
    try:
        found = describe(args.name, ctx)
    except UnknownName as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        json.dump(found, out, indent=2)
        print(file=out)
    else:
        print(render(found), file=out)
    return EXIT_OK


# --------------------------------------------------------------------------- main
_DATA_DIR_HELP = "data directory (default $PRIVPUB_DATA_DIR, else the user cache dir)"


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser and its subcommands' parsers (by name)."""
    p = argparse.ArgumentParser(
        prog="privpub",
        description="Run privpub's experiments, discover them, check the data directory, "
        "reproduce a paper, show where a name's code, config, tests and figures are. Every "
        "subcommand also takes the key=value overrides of conf/config.yaml that apply to it "
        "(`privpub audit --quick results_dir=/tmp/r n_jobs=2`).",
    )
    sub = p.add_subparsers(dest="command",
                           metavar="{run,list,data,reproduce,show,leaderboard,audit}")
    sub.add_parser("run", add_help=False, help="run an experiment or a sweep: Hydra's "
                   "overrides, the same command as `python run.py` (privpub run --help)")
    _add_list(sub)
    _add_data(sub)
    _add_reproduce(sub)
    _add_show(sub)
    from privpub.experiments.leaderboard import add_leaderboard_parser

    add_leaderboard_parser(sub)
    audit.add_parser(sub)
    for parser in sub.choices.values():
        keys = parser.get_default("config_keys")
        if keys:
            parser.epilog = ("Also takes key=value (conf/config.yaml): "
                             + ", ".join(f"{k}= ({flag})" for k, flag in keys.items()))
    return p, sub.choices


def _add_list(sub) -> None:
    ls = sub.add_parser("list", help="every experiment: paper figure, datasets (present?), "
                        "trial count and measured time per scale")
    ls.add_argument("--paper", help="only this paper's experiments (e.g. day2016)")
    ls.add_argument("--scale", choices=SCALES, help="only this scale (default: every "
                    "scale; large only for the experiments that have it)")
    ls.add_argument("--results-dir", default="results",
                    help="where measured times are read (<dir>/<exp>/<scale>/meta.json)")
    ls.add_argument("--data-dir", help=_DATA_DIR_HELP)
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.add_argument("--conf-dir", help=argparse.SUPPRESS)
    ls.set_defaults(config_keys={"scale": "--scale", "results_dir": "--results-dir",
                                 "data_dir": "--data-dir"})


def _add_data(sub) -> None:
    data = sub.add_parser("data", help="check every real dataset's files (sha256); exit 1 if "
                          "any is missing or corrupt")
    data.add_argument("--download", action="store_true",
                      help="fetch missing files that have a direct URL (hash-checked)")
    data.add_argument("--data-dir", help=_DATA_DIR_HELP)
    data.add_argument("--json", action="store_true", help="machine-readable output")
    data.set_defaults(config_keys={"data_dir": "--data-dir", "allow_download": "--download"})


def _add_reproduce(sub) -> None:
    rep = sub.add_parser("reproduce", help="regenerate every figure and table of a paper (or "
                         "of all papers): print the command, the expected time and any missing "
                         "data, then run it (--print: only print)")
    rep.add_argument("papers", nargs="+", metavar="paper",
                     help="paper key(s) (e.g. day2016, or the five seed papers qardaji2012 "
                     "epasto2022 day2016 sala2011 farias2021) or 'all'")
    rep.add_argument("--scale", choices=SCALES, default="paper",
                     help="smoke | small | paper (default: paper)")
    rep.add_argument("--print", dest="print_only", action="store_true",
                     help="only print the command (by default it runs, after printing it, "
                     "the expected time and any missing data)")
    rep.add_argument("--run", action="store_true", help=argparse.SUPPRESS)  # the default now
    rep.add_argument("overrides", nargs="*", metavar="OVERRIDE",
                     help="Hydra overrides added to the command, anywhere on the line (e.g. "
                     "n_jobs=2 results_dir=/tmp/r); scale= is --scale")
    rep.add_argument("--conf-dir", help=argparse.SUPPRESS)
    rep.set_defaults(config_keys={"scale": "--scale"}, passes_overrides=True)


def _add_show(sub) -> None:
    show = sub.add_parser("show", help="a mechanism, experiment, dataset or metric: its code, "
                          "config, tests, the experiments using it and their figure files")
    show.add_argument("name", help="e.g. ldrc, sala2011_fig4, as_caida, dk2_distance")
    show.add_argument("--results-dir", default="results",
                      help="the results directory the figure paths are in (default: results)")
    show.add_argument("--data-dir", help=_DATA_DIR_HELP)
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.add_argument("--plugins", nargs="+", default=[], metavar="MODULE",
                      help="modules or .py files registering your own mechanisms (imported "
                           "first)")
    show.add_argument("--conf-dir", help=argparse.SUPPRESS)
    show.set_defaults(config_keys={"results_dir": "--results-dir", "data_dir": "--data-dir",
                                   "plugins": "--plugins"})


# ------------------------------------------------------------------ key=value overrides
#: A ``key=value`` override (Hydra's syntax, e.g. ``n_jobs=2``, ``+experiment.x=1``,
#: ``hydra/launcher=local``), told apart from flags and their values.
_OVERRIDE = re.compile(r"^[+~]{0,2}[A-Za-z_][\w./@-]*=")


class _Unset:
    """The default of a flag a key=value may set: marks the flag as not given."""

    def __init__(self, default):
        self.default = default

    def __str__(self) -> str:  # ``%(default)s`` in a flag's help
        return str(self.default)


class _UsageError(Exception):
    """A bad key=value: one line on stderr, exit 2."""


def parse_args(parser: argparse.ArgumentParser, commands: dict, argv: list[str]):
    """Parse ``argv``, whose top-level ``key=value`` overrides (conf/config.yaml's keys) set
    the options their subcommand declares (``config_keys``: key -> flag), in any order with
    the flags. A flag and its key saying different things, an unknown key and a key the
    subcommand does not take are :class:`_UsageError`; a subcommand with
    ``passes_overrides`` hands every other override on (``args.overrides``)."""
    from privpub.errors import ConfigError
    from privpub.experiments.cli import check_renamed

    try:
        check_renamed(argv)
    except ConfigError as exc:
        where = f"privpub {argv[0]}" if argv and argv[0] in commands else "privpub"
        raise _UsageError(f"{where}: {exc}") from None
    overrides = [a for a in argv[1:] if _OVERRIDE.match(a)]
    rest = argv[:1] + [a for a in argv[1:] if not _OVERRIDE.match(a)]
    for sub in commands.values():
        keys = sub.get_default("config_keys") or {}
        sub.set_defaults(**{_dest(f): _Unset(sub.get_default(_dest(f))) for f in keys.values()})
    args = parser.parse_args(rest)
    sub = commands.get(args.command)
    keys = (sub.get_default("config_keys") if sub else None) or {}
    tokens, passed, seen = [], [], {}
    for text in overrides:
        key = text.lstrip("+~").split("=", 1)[0]
        if key not in keys:
            if sub is not None and sub.get_default("passes_overrides"):
                passed.append(text)  # the run checks it
                continue
            raise _UsageError(_not_taken(args.command, key, keys))
        flag = keys[key]
        given = getattr(args, _dest(flag))
        default = given.default if isinstance(given, _Unset) else None
        value = _value(args.command, text, boolean=isinstance(default, bool))
        if not isinstance(given, _Unset) and not _same(given, value):
            raise _UsageError(f"privpub {args.command}: {flag} {_shown(given)} and {text} say "
                              "different things; give one of them")
        if not _same(seen.get(key, value), value):
            raise _UsageError(f"privpub {args.command}: {key}= is given twice, differently")
        seen[key] = value
        if isinstance(given, _Unset) and value is False and default is True:
            tokens += [_negative(sub, flag)]  # key=false of a --flag/--no-flag switch
        elif isinstance(given, _Unset) and not (value is None or value is False
                                                or value == []):  # 0 is a value
            tokens += [flag] if value is True else [flag, *map(str, _as_list(value))]
    if tokens:
        args = parser.parse_args([*rest, *tokens])  # argparse checks types and choices
    for name, value in vars(args).items():
        if isinstance(value, _Unset):
            setattr(args, name, value.default)
    if passed:
        args.overrides = [*passed, *args.overrides]
    return args


def _negative(parser: argparse.ArgumentParser, flag: str) -> str:
    """The ``--no-<flag>`` of a switch (``argparse.BooleanOptionalAction``) that is on by
    default."""
    for action in parser._actions:
        if flag in action.option_strings:
            return next(o for o in action.option_strings if o.startswith("--no-"))
    raise ValueError(flag)


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _value(command: str, text: str, *, boolean: bool):
    """The value of the override ``text``, typed as Hydra types it (``n_jobs=2`` -> 2,
    ``plugins=[a,b]`` -> a list); argparse then checks it as it checks its flag."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        (override,) = OverridesParser.create().parse_overrides([text])
    except HydraException as exc:
        raise _UsageError(f"privpub {command}: {str(exc).strip().splitlines()[0]}") from None
    if override.is_sweep_override() or override.is_delete():
        raise _UsageError(f"privpub {command}: {text} is not one value (sweeps: privpub run -m)")
    value = override.value()
    if boolean and not isinstance(value, bool):
        raise _UsageError(f"privpub {command}: {text}: must be true or false")
    if isinstance(value, dict):
        raise _UsageError(f"privpub {command}: {text}: a mapping is not an option's value")
    return value


def _not_taken(command: str, key: str, keys: dict) -> str:
    from privpub.experiments.cli import TOP_LEVEL_KEYS, unknown_key_message

    if key not in TOP_LEVEL_KEYS:
        return f"privpub {command}: {unknown_key_message([key])}"
    takes = ", ".join(f"{k}=" for k in keys) or "no key=value"
    return f"privpub {command}: {key}= does not apply here; it takes {takes}"


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _same(given, value) -> bool:
    """Whether a flag's parsed value and a key's say the same thing."""
    if isinstance(given, list):
        return [str(v) for v in given] == [str(v) for v in _as_list(value)]
    return given == value or str(given) == str(value)


def _shown(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def main(argv: list[str] | None = None, *, out=None) -> int:
    """Entry point of the ``privpub`` console script; returns the exit code."""
    out = sys.stdout if out is None else out
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run"]:  # every argument is Hydra's (privpub run --help: the app's help)
        from privpub.experiments import app

        with contextlib.redirect_stdout(out):
            return app.run(argv[1:], prog="privpub run")
    parser, commands = _parser()
    try:
        with contextlib.redirect_stdout(out):  # --help goes to ``out`` (tests capture it)
            args = parse_args(parser, commands, argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, message on stderr)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except _UsageError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    if args.command is None:
        parser.print_help(out)
        return EXIT_USAGE
    from privpub.experiments.leaderboard import cmd_leaderboard

    handler = {"list": _cmd_list, "data": _cmd_data, "reproduce": _cmd_reproduce,
               "show": _cmd_show, "leaderboard": cmd_leaderboard,
               "audit": audit.cmd_audit}[args.command]
    try:
        return handler(args, out)
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            return EXIT_USAGE
        raise
    except BrokenPipeError:  # `privpub list | head`
        return EXIT_OK
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback
        print(f"privpub {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
