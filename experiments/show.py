"""``privpub show NAME``: where a mechanism, an experiment, a dataset or a metric lives.

For one name: its code (file and line), its config, its tests, the experiments that use it
(at which scales) and their figure files, and what the registry says of it (privacy notion,
caveat, the paper section it implements, how the audit runs it, its blind spot, why no
leaderboard ranks it). A name of several kinds shows each.

The lookup is open to new kinds: :func:`register_kind` adds a :class:`ShowKind` (e.g. a
leaderboard task) whose ``find`` says whether a name is one of it, ``describe`` gives a
JSON-ready dict and ``render`` its lines of text. Usage: README.md ("Discover and
reproduce").
"""

from __future__ import annotations

import difflib
import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from privpub.experiments import catalog
from privpub.results import OPT_IN_SCALES, SCALES, experiment_scales

__all__ = ["ShowContext", "ShowKind", "KINDS", "register_kind", "describe", "render",
           "UnknownName", "docstring_source"]


def _notion(notion: str) -> str:
    from privpub.registry import describe_notion

    return describe_notion(notion)


class UnknownName(LookupError):
    """A name that is none of the kinds; its message is one line with close matches."""


@dataclass
class ShowContext:
    """Where ``show`` looks: the config directory, the results directory (figure paths) and
    the data directory (file status)."""

    conf: Path = catalog.CONF_DIR
    results_dir: str = "results"
    data_dir: str | None = None
    root: Path | None = catalog.CHECKOUT  # None from a wheel: no tests to name

    @cached_property
    def experiments(self) -> list[tuple[Path, dict]]:
        """(file, experiment) of every readable experiment file."""
        return [(p, e) for p, e, _ in catalog.load_experiments(self.conf) if e is not None]

    @cached_property
    def test_files(self) -> dict[Path, str]:
        """The project's test files (``<package>/tests/test_*.py``) and their text."""
        found = {}
        for top in sorted(self.root.iterdir()) if self.root else ():
            if not top.is_dir() or top.name.startswith((".", "_")) or top.name == "results":
                continue
            for path in sorted(top.rglob("test_*.py")):
                if "tests" in path.relative_to(self.root).parts[:-1]:
                    found[path] = path.read_text(encoding="utf-8", errors="replace")
        return found

    def relative(self, path: str | Path) -> str:
        """``path`` relative to the checkout when inside it."""
        path = Path(path).resolve()
        inside = self.root is not None and path.is_relative_to(self.root)
        return str(path.relative_to(self.root)) if inside else str(path)

    def tests_naming(self, *names: str) -> list[str]:
        """The test files that mention any of ``names`` as a whole word."""
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, dict.fromkeys(names))) + r")\b")
        return [self.relative(p) for p, text in self.test_files.items() if pattern.search(text)]

    def uses(self, name: str, used: Callable[[dict, object], list[str]], *,
             metric: bool = False) -> list[dict]:
        """The experiments whose file names ``name`` and that use it at some scale:
        ``[{experiment, figure, scales: {scale: {"as": [...], "figures": [...]}}}]``.
        ``used(layered experiment, spec or None)`` gives how the experiment uses it at a
        scale (e.g. the mechanism's labels; empty: not used there). For a ``metric``, the
        figures are those that draw it (all of them when no plot names it)."""
        word = re.compile(rf"\b{re.escape(name)}\b")
        out = []
        for path, exp in self.experiments:
            if not word.search(path.read_text(encoding="utf-8")):
                continue
            scales = {}
            for scale in experiment_scales(exp):
                layered, spec, _ = _experiment_at(exp, scale)
                how = used(layered, spec) if layered is not None else []
                if how:
                    figures = self.figures(exp, scale, layered, spec, name if metric else None)
                    scales[scale] = {"as": how, "figures": figures}
            if scales:
                exp_name = str(exp.get("name") or path.stem)
                out.append({"experiment": exp_name, "figure": catalog.figure_of(exp_name, exp),
                            "scales": scales})
        return out

    def figures(self, exp: dict, scale: str, layered: dict, spec, metric: str | None = None):
        """``results/<experiment>/<scale>/<file>`` of every plot at ``scale`` (of those that
        draw ``metric``, when it is one of the experiment's metrics)."""
        from privpub.experiments.spec import plot_file, plot_metrics

        plots = spec.plots if spec is not None else [
            p for p in layered.get("plots") or [] if isinstance(p, dict)]
        if metric is not None and any(metric in plot_metrics(p) for p in plots):
            plots = [p for p in plots if metric in plot_metrics(p)]
        base = Path(self.results_dir) / str(exp.get("name")) / scale
        return [str(base / plot_file(p)) for p in plots]


def _experiment_at(exp: dict, scale: str):
    """(the experiment at ``scale`` with its scale block applied, its resolved spec, the
    error that stopped either); None for what cannot be had."""
    from privpub.experiments.precedence import layer_experiment
    from privpub.experiments.spec import resolve_experiment

    try:
        layered = layer_experiment(exp, scale=scale).experiment
    except Exception as exc:  # noqa: BLE001 - a broken file is shown as not using the name
        return None, None, f"{type(exc).__name__}: {exc}"
    try:
        return layered, resolve_experiment(exp, scale=scale), None
    except Exception as exc:  # noqa: BLE001 - the YAML still says what it uses
        return layered, None, f"{type(exc).__name__}: {exc}"


def _entry_names(items) -> list[str]:
    """The names of a list of entries (names or mappings with a ``name``)."""
    items = items if isinstance(items, list) else [items] if items else []
    return [str(i if isinstance(i, str) else (i or {}).get("name")) for i in items]


@dataclass(frozen=True)
class ShowKind:
    """One kind of name ``show`` knows."""

    kind: str
    find: Callable[[str, ShowContext], bool]
    describe: Callable[[str, ShowContext], dict]
    render: Callable[[dict], list[str]]
    names: Callable[[ShowContext], Iterable[str]]  # every name of the kind (close matches)


#: The kinds, in the order a name is looked up and shown.
KINDS: dict[str, ShowKind] = {}


def register_kind(kind: ShowKind) -> ShowKind:
    """Add (or replace) a kind of name ``privpub show`` looks up."""
    KINDS[kind.kind] = kind
    return kind


def describe(name: str, ctx: ShowContext | None = None) -> dict:
    """``{"name": name, "found": [one dict per kind the name is]}``; an unknown name raises
    :class:`UnknownName`."""
    from privpub.errors import PrivpubError

    ctx = ctx or ShowContext()
    try:
        found = [k.describe(name, ctx) for k in KINDS.values() if k.find(name, ctx)]
    except PrivpubError as exc:  # e.g. an installed plug-in that cannot be loaded
        raise UnknownName(f"privpub show: cannot look {name!r} up: {exc}") from None
    if not found:
        known = sorted({n for k in KINDS.values() for n in _names(k, ctx)})
        close = difflib.get_close_matches(name, known, n=5, cutoff=0.6)
        hint = f"; close matches: {', '.join(close)}" if close else ""
        raise UnknownName(f"privpub show: {name!r} is no known {' / '.join(KINDS)} name{hint}")
    return {"name": name, "found": found}


def _names(kind: ShowKind, ctx: ShowContext) -> list[str]:
    try:
        return list(kind.names(ctx))
    except Exception:  # noqa: BLE001 - a kind that cannot list itself suggests nothing
        return []


def render(described: dict) -> str:
    """The text of :func:`describe`'s answer."""
    blocks = ["\n".join(KINDS[entry["kind"]].render(entry)) for entry in described["found"]]
    return "\n\n".join(blocks)


# --------------------------------------------------------------------------- shared pieces
def _code_of(func, ctx: ShowContext) -> dict:
    """File, line of the ``def`` and qualified name of a function (of a partial's)."""
    while isinstance(func, functools.partial):
        func = func.func
    func = inspect.unwrap(func)
    try:
        lines, first = inspect.getsourcelines(func)
        offset = next((i for i, line in enumerate(lines)
                       if line.lstrip().startswith(("def ", "async def "))), 0)
        file = ctx.relative(inspect.getsourcefile(func))
    except (OSError, TypeError):
        return {"file": None, "line": None, "function": _qualname(func)}
    return {"file": file, "line": first + offset, "function": _qualname(func)}


def _qualname(func) -> str:
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', func)}"


def _config(group: str, name: str, ctx: ShowContext) -> dict | None:
    """``conf/<group>/<name>.yaml``: its path and values (None when there is none)."""
    path = ctx.conf / group / f"{name}.yaml"
    if not path.is_file():
        return None
    try:
        values = catalog.read_yaml(path)
    except Exception:  # noqa: BLE001 - shown as unreadable
        values = None
    return {"file": ctx.relative(path), "values": values if isinstance(values, dict) else None}


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


_NUMBER = r"(?:\(\d+[a-z]?\)|[A-Z]?\d+(?:\.\d+)*[a-z]?)"  # 4.3, 2, A.1, (3)
_REF = (r"(?:Sec(?:tion)?s?\.?|§|Algorithms?|Alg\.|Eqs?\.?|Equations?|Theorem|Thm\.?|"
        r"Lemma|Def(?:inition)?\.?|App(?:endix)?\.?)\s*" + _NUMBER)
#: The first "Sec" / "Section" / "Algorithm" / "Eq" of a docstring, with the references
#: that follow it ("Sec 4.3, Theorem 4").
_SOURCE = re.compile(r"(?<!\w)(?:Sec(?:tion)?s?\.?|§|Algorithms?|Alg\.|Eqs?\.?|Equations?)\s*"
                     + _NUMBER + rf"(?:\s*(?:,|and|;)\s*{_REF})*")


def docstring_source(func) -> str | None:
    """The first section, algorithm or equation a function's docstring cites (with the
    references right after it), e.g. ``"Sec 4.3, Theorem 4"``; None if it cites none."""
    match = _SOURCE.search(" ".join((inspect.getdoc(func) or "").split()))
    return match.group(0) if match else None


def _listing(label: str, items: list[str], none: str = "none", *, width: int = 13,
             indent: int = 2) -> list[str]:
    """``label`` and the first item on one line, the others aligned under it."""
    head, pad = " " * indent, " " * (indent + width)
    if not items:
        return [f"{head}{label:<{width}}{none}"]
    return [f"{head}{label:<{width}}{items[0]}", *(pad + i for i in items[1:])]


def _scales_text(scales: Iterable[str]) -> str:
    scales = list(scales)
    every = [s for s in SCALES if s not in OPT_IN_SCALES]  # the opt-in ones are extra
    return "all scales" if scales[:len(every)] == every else ", ".join(scales)


def _figures_text(per_scale: dict[str, list[str]]) -> list[str]:
    """Figure paths, one per plot, with the scales folded into ``{smoke,small,paper}``."""
    by_pattern: dict[str, list[str]] = {}
    for scale, files in per_scale.items():
        for file in files:
            parts = Path(file).parts
            key = str(Path(*parts[:-2], "\0", parts[-1])) if len(parts) >= 2 else file
            by_pattern.setdefault(key, []).append(scale)
    out = []
    for key, scales in by_pattern.items():
        filler = scales[0] if len(scales) == 1 else "{" + ",".join(scales) + "}"
        out.append(key.replace("\0", filler))
    return out


def _uses_lines(uses: list[dict], what: str, *, labels: bool = True) -> list[str]:
    """The experiments block: one line per experiment (at which scales, as which series),
    its figure files under it."""
    if not uses:
        return [f"  {'experiments':<13}none (no experiment file {what})"]
    lines = []
    for use in uses:
        scales = use["scales"]
        named = list(dict.fromkeys(x for s in scales.values() for x in s["as"]))
        lines.append(f"{use['experiment']} ({use['figure']}) at {_scales_text(scales)}"
                     + (f", as {', '.join(named)}" if labels and named else ""))
        figures = _figures_text({s: v["figures"] for s, v in scales.items()})
        lines += [f"  {f}" for f in figures]
    return _listing("experiments", lines)


def _wrapped(label: str, text: str, *, width: int = 13, indent: int = 2) -> list[str]:
    """``label`` and ``text`` wrapped at 100 columns, aligned under its first line."""
    import textwrap

    head = " " * indent + f"{label:<{width}}"
    return textwrap.wrap(text, 100, initial_indent=head, subsequent_indent=" " * len(head),
                         break_on_hyphens=False) or [head.rstrip()]


def _summary(func) -> str:
    """The first paragraph of a function's docstring, on one line."""
    return " ".join((inspect.getdoc(func) or "").split("\n\n")[0].split())


# --------------------------------------------------------------------------- mechanisms
def _find_mechanism(name: str, ctx: ShowContext) -> bool:
    from privpub.errors import UnknownNameError
    from privpub.registry import get_mechanism

    try:
        get_mechanism(name)
    except UnknownNameError:  # a broken plug-in is said by describe, not hidden
        return False
    return True


def _describe_mechanism(name: str, ctx: ShowContext) -> dict:
    from privpub.experiments.hydra_support import mechanism_node
    from privpub.papers import paper_citation
    from privpub.registry import get_mechanism

    info = get_mechanism(name)
    func = info.func
    callable_caveat = callable(info.caveat)
    if info.source:
        source = {"text": info.source, "from": "registry"}
    else:
        text = docstring_source(func)
        source = {"text": text, "from": "docstring" if text else None}

    def used(layered: dict, spec) -> list[str]:
        from privpub.experiments.precedence import as_entry

        if spec is not None:
            return list(dict.fromkeys(c.label for c in spec.drawn_cells if c.mechanism == name))
        entries = [as_entry(m, "mechanism") for m in layered.get("mechanisms") or []]
        return [str(e.get("label") or name) for e in entries if e["name"] == name]

    return {
        "kind": "mechanism",
        "name": name,
        "summary": _summary(func),
        "role": info.role,
        "input_kind": info.input_kind,
        "output_kind": info.output_kind,
        "privacy": info.privacy,
        "paper": info.paper,
        "paper_citation": paper_citation(info.paper) if info.paper else None,
        "caveat": None if callable_caveat else info.caveat,
        "caveat_per_parameter": callable_caveat,
        "caveat_at_defaults": info.caveat_for({}) if callable_caveat else info.caveat,
        "seeds_of": info.seeds_of,
        "neighbourhood": info.neighbourhood,
        "audit": _audit_of(info),
        "blind_spots": {label.partition(" ")[2] or "every configuration": why
                        for label, why in info.blind_spots.items()},
        "unranked": info.unranked,
        "code": _code_of(func, ctx),
        "config": _config("mechanism", name, ctx) or {
            "file": None, "values": mechanism_node(name, info.parameters)},
        "parameters": {k: (None if v is inspect.Parameter.empty else _jsonable(v))
                       for k, v in info.parameters.items()},
        "required": [k for k, v in info.parameters.items() if v is inspect.Parameter.empty],
        "source": source,
        "tests": ctx.tests_naming(name, func.__name__),
        "experiments": ctx.uses(name, used),
    }


def _audit_of(info) -> dict:
    """What ``privpub audit`` runs of a mechanism (its registration's ``audit=``)."""
    from privpub.audit.configs import audit_settings
    from privpub.audit.stored import config_label

    settings = audit_settings(info)
    return {"configurations": [config_label(info.name, c).partition(" ")[2] or "defaults"
                               for c in settings.configurations],
            "cost_ms": settings.cost_ms, "audited": info.is_dp}


def _render_mechanism(d: dict) -> list[str]:
    code = d["code"]
    where = f"{code['file']}:{code['line']}" if code["file"] else "(no source file)"
    params = [f"{k} (required)" if k in d["required"] else f"{k}={v!r}"
              for k, v in d["parameters"].items()]
    source = d["source"]
    if source["from"] == "registry":
        section = f"{source['text']} (register_mechanism(source=...))"
    elif source["text"]:
        section = f"{source['text']} (from its docstring; no source= in the registry)"
    else:
        section = "not stated (no source= in the registry, no Sec/Algorithm/Eq in its docstring)"
    if d["caveat_per_parameter"]:
        caveat = ("depends on the parameters (a callable, evaluated per cell); at the defaults: "
                  + (d["caveat_at_defaults"] or "none"))
    else:
        caveat = d["caveat"] or "none (the claim holds)"
    config = d["config"]
    audit = d["audit"]
    audited = (f"{', '.join(audit['configurations'])} at epsilon = 1 (one run ~"
               f"{audit['cost_ms']:g} ms)" if audit["audited"] else "not audited (not DP)")
    lines = [
        f"{d['name']}  ({d['role']}{', ' + d['paper'] if d['paper'] else ''})",
        *(_wrapped("", d["summary"], width=0) if d["summary"] else []),
        f"  {'code':<13}{where}  ({code['function']})",
        f"  {'config':<13}" + (config["file"] or f"mechanism={d['name']} (no YAML: its name "
                                                 "and parameters, all null)"),
        f"  {'kinds':<13}{d['input_kind']} -> {d['output_kind']}",
        f"  {'privacy':<13}{_notion(d['privacy'])}",
        f"  {'role':<13}{d['role']}",
        f"  {'paper':<13}" + (f"{d['paper']}: {d['paper_citation']}" if d["paper"] else "none"),
        f"  {'section':<13}{section}",
        *_wrapped("caveat", caveat),
        *([f"  {'neighbours':<13}{d['neighbourhood']} (not the notion's default)"]
          if d["neighbourhood"] else []),
        *_wrapped("audit", audited),
        *[line for label, why in d["blind_spots"].items()
          for line in _wrapped("blind spot", f"{label}: {why}")],
        *(_wrapped("leaderboard", f"never ranked: {d['unranked']}") if d["unranked"] else []),
        *([f"  {'seeds of':<13}{d['seeds_of']}"] if d["seeds_of"] else []),
        *_wrapped("parameters", ", ".join(params) or "none"),
        *_listing("tests", d["tests"], "none found (no test file names it)"),
        *_uses_lines(d["experiments"], "uses it"),
    ]
    return lines


def _mechanism_names(ctx: ShowContext) -> list[str]:
    from privpub.registry import mechanisms

    return list(mechanisms())


# --------------------------------------------------------------------------- experiments
def _experiment_file(name: str, ctx: ShowContext) -> tuple[Path, dict] | None:
    for path, exp in ctx.experiments:
        if path.stem == name or exp.get("name") == name:
            return path, exp
    return None


def _describe_experiment(name: str, ctx: ShowContext) -> dict:
    from privpub.papers import paper_citation

    path, exp = _experiment_file(name, ctx)
    paper = catalog.paper_of(name, exp)
    scales = {}
    for scale in experiment_scales(exp):
        layered, spec, error = _experiment_at(exp, scale)
        row = {"trials": None, "cells": None, "repetitions": None, "error": error}
        if spec is not None:
            row.update(trials=spec.n_trials, cells=len(spec.cells), repetitions=spec.repetitions)
            mechanisms = list(dict.fromkeys(
                c.mechanism if c.label == c.mechanism else f"{c.mechanism} ({c.label})"
                for c in spec.drawn_cells))
            datasets = list(dict.fromkeys(c.dataset for c in spec.cells))
        else:
            mechanisms = _entry_names((layered or exp).get("mechanisms"))
            datasets = catalog.scale_datasets(exp, scale)
        scales[scale] = {**row, "datasets": datasets, "mechanisms": mechanisms,
                         "figures": ctx.figures(exp, scale, layered or exp, spec)}
    claims = [str(c.get("id")) for c in exp.get("claims") or [] if isinstance(c, dict)]
    return {
        "kind": "experiment",
        "name": name,
        "file": ctx.relative(path),
        "paper": paper,
        "paper_citation": paper_citation(paper),
        "figure": catalog.figure_of(name, exp),
        "title": str(exp.get("title") or ""),
        "claims": claims,
        "scales": scales,
    }


def _render_experiment(d: dict) -> list[str]:
    lines = [
        f"{d['name']}  (experiment: {d['paper']} {d['figure']})",
        *(_wrapped("", d["title"], width=0) if d["title"] else []),
        f"  {'file':<13}{d['file']}",
        f"  {'paper':<13}{d['paper']}: {d['paper_citation']}",
        *_listing("claims", d["claims"], "none"),
    ]
    for scale, row in d["scales"].items():
        trials = (f"error: {row['error']}" if row["error"] else
                  f"{row['trials']:,} trials ({row['cells']:,} cells x {row['repetitions']} reps)")
        lines += [f"  {scale}: {trials}",
                  *_wrapped("datasets", ", ".join(row["datasets"]) or "-", width=11, indent=4),
                  *_wrapped("mechanisms", ", ".join(row["mechanisms"]) or "-", width=11,
                            indent=4),
                  *_listing("figures", row["figures"], "-", width=11, indent=4)]
    return lines


# --------------------------------------------------------------------------- datasets
def _find_dataset(name: str, ctx: ShowContext) -> bool:
    from privpub.data import dataset_names

    return name in dataset_names()


def _describe_dataset(name: str, ctx: ShowContext) -> dict:
    from privpub.data import file_status, get_dataset_spec, resolve_data_dir

    spec = get_dataset_spec(name)
    files = [] if spec.synthetic else [
        {"path": st.path, "status": st.status, "expected_path": str(st.expected_path),
         "url": st.url, "download_url": st.download_url, "sha256": st.spec.sha256,
         "size": st.size}
        for st in file_status([name], data_dir=ctx.data_dir)]

    def used(layered: dict, spec_) -> list[str]:
        if spec_ is not None:
            return [name] if any(c.dataset == name for c in spec_.cells) else []
        return [name] if name in _entry_names(layered.get("datasets")) else []

    return {
        "kind": "dataset",
        "name": name,
        "data_kind": spec.kind,
        "description": spec.description,
        "synthetic": spec.synthetic,
        "papers": list(spec.papers),
        "loader": _code_of(spec.loader, ctx),
        "config": _config("dataset", name, ctx),
        "options": {k: _jsonable(v) for k, v in spec.defaults.items()},
        "data_dir": str(resolve_data_dir(ctx.data_dir)),
        "files": files,
        "tests": ctx.tests_naming(name),
        "experiments": ctx.uses(name, used),
    }


def _render_dataset(d: dict) -> list[str]:
    loader = d["loader"]
    where = f"{loader['file']}:{loader['line']}" if loader["file"] else "(no source file)"
    options = [f"{k}={v!r}" for k, v in d["options"].items()]
    lines = [
        f"{d['name']}  (dataset: {d['data_kind']}, {'synthetic' if d['synthetic'] else 'real'})",
        *(_wrapped("", d["description"], width=0) if d["description"] else []),
        f"  {'loader':<13}{where}  ({loader['function']})",
        f"  {'config':<13}" + (d["config"]["file"] if d["config"] else "none"),
        *_wrapped("options", ", ".join(options) or "none"),
        f"  {'papers':<13}{', '.join(d['papers']) or '-'}",
    ]
    if d["synthetic"]:
        lines.append(f"  {'files':<13}none (generated, seeded by the dataset alone)")
    else:
        lines.append(f"  {'files':<13}in {d['data_dir']}:")
        for f in d["files"]:
            lines += [f"    {f['path']}  [{f['status']}]  {f['expected_path']}",
                      f"      source: {f['url']}",
                      f"      sha256: {f['sha256']}"]
    return [*lines, *_listing("tests", d["tests"], "none found"),
            *_uses_lines(d["experiments"], "uses it", labels=False)]


def _dataset_names(ctx: ShowContext) -> list[str]:
    from privpub.data import dataset_names

    return dataset_names()


# --------------------------------------------------------------------------- metrics
def _find_metric(name: str, ctx: ShowContext) -> bool:
    from privpub.errors import UnknownNameError
    from privpub.registry import get_metric

    try:
        get_metric(name)
    except UnknownNameError:
        return False
    return True


def _describe_metric(name: str, ctx: ShowContext) -> dict:
    from privpub.registry import get_metric

    info = get_metric(name)

    def used(layered: dict, spec) -> list[str]:
        metrics = spec.metrics if spec is not None else [str(m) for m in
                                                         layered.get("metrics") or []]
        return [name] if name in metrics else []

    return {
        "kind": "metric",
        "name": name,
        "label": info.label,
        "summary": _summary(info.func),
        "release_kinds": list(info.kinds),
        "higher_is_better": info.higher_is_better,
        "random": info.takes_rng,
        "stream": info.stream if info.stream != name else None,
        "code": _code_of(info.func, ctx),
        "tests": ctx.tests_naming(name, info.func.__name__),
        "experiments": ctx.uses(name, used, metric=True),
    }


def _render_metric(d: dict) -> list[str]:
    code = d["code"]
    where = f"{code['file']}:{code['line']}" if code["file"] else "(no source file)"
    better = "higher is better" if d["higher_is_better"] else "lower is better"
    return [
        f"{d['name']}  (metric: {d['label']})",
        *(_wrapped("", d["summary"], width=0) if d["summary"] else []),
        f"  {'code':<13}{where}  ({code['function']})",
        f"  {'releases':<13}{', '.join(d['release_kinds'])}; {better}",
        *([f"  {'random':<13}draws from "
           + (f"metric {d['stream']}'s stream" if d["stream"] else "its own stream")]
          if d["random"] else []),
        *_listing("tests", d["tests"], "none found"),
        *_uses_lines(d["experiments"], "computes it", labels=False),
    ]


def _metric_names(ctx: ShowContext) -> list[str]:
    from privpub.registry import metrics

    return list(metrics())


register_kind(ShowKind("mechanism", _find_mechanism, _describe_mechanism, _render_mechanism,
                       _mechanism_names))
register_kind(ShowKind("experiment", lambda n, c: _experiment_file(n, c) is not None,
                       _describe_experiment, _render_experiment,
                       lambda c: [str(e.get("name") or p.stem) for p, e in c.experiments]))
register_kind(ShowKind("dataset", _find_dataset, _describe_dataset, _render_dataset,
                       _dataset_names))
register_kind(ShowKind("metric", _find_metric, _describe_metric, _render_metric,
                       _metric_names))
