"""How an experiment file, its scale block and the command line combine (lowest first).

The precedence rules are in docs/design.md (Experiments, "Precedence"); this module applies
them to the plain ``experiment`` mapping, before :mod:`privpub.experiments.spec` expands it into
cells.
"""

from __future__ import annotations

from typing import NamedTuple

from privpub.errors import ConfigError
from privpub.results import OPT_IN_SCALES, SCALES

__all__ = [
    "EXPERIMENT_KEYS",
    "DELETE",
    "Layers",
    "layer_experiment",
    "as_entry",
    "as_list",
]

#: The keys an experiment file may have, and those a scale block may set.
EXPERIMENT_KEYS = frozenset(
    "name paper title figure datasets mechanisms grid metrics repetitions plots keep_releases "
    "notes claims privacy noise_free cold scales".split()
)
_SCALE_KEYS = frozenset(
    "datasets mechanisms grid metrics repetitions plots keep_releases noise_free cold".split()
)
_PATCH_KEYS = frozenset("label params grid drop".split())

#: Marks a command-line deletion (``~experiment.<key>``) in ``overrides``.
DELETE = object()

#: Marks an entry its scale block drops; it stays in place until the command line's
#: ``mechanisms.<i>`` edits (whose index is the experiment file's) have been applied.
_DROPPED = "__dropped__"


def as_entry(item, what: str) -> dict:
    if isinstance(item, str):
        return {"name": item}
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        return dict(item)
    raise ConfigError(f"each {what} must be a name or a mapping with a 'name', got {item!r}")


def as_list(value) -> list:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _entry_key(entry: dict) -> str:
    return str(entry.get("key") or entry.get("label") or entry["name"])


def _patch_mechanisms(entries: list, patches, where: str, originals: list | None = None) -> list:
    """Apply a scale block's ``mechanisms: {<key or label>: {params, grid, label, drop}}``.

    ``originals``: the entries as the experiment file states them (the same length), which
    name the entries for the patches when the command line relabelled one. Dropped entries
    stay in place, marked :data:`_DROPPED`.
    """
    if not isinstance(patches, dict):
        raise ConfigError(
            f"{where}: a scale block patches mechanisms by label instead of replacing the "
            "list, e.g. mechanisms: {Truncation: {grid: {theta: [4, 16]}}, Flowgraph: "
            "{drop: true}}; a mechanism in the base list then runs at every scale"
        )
    entries = [as_entry(e, "mechanism") for e in entries]
    ids = entries
    if originals is not None and len(originals) == len(entries):
        ids = [as_entry(e, "mechanism") for e in originals]
    known = [_entry_key(e) for e in ids]
    out = []
    for key, patch in patches.items():
        if str(key) not in known and not any(e["name"] == key for e in ids):
            raise ConfigError(
                f"{where}: mechanism patch {key!r} matches no entry; entries: {', '.join(known)}"
            )
        if not isinstance(patch, dict) or set(patch) - _PATCH_KEYS:
            raise ConfigError(
                f"{where}: the patch of {key!r} must be a mapping with keys from "
                f"{', '.join(sorted(_PATCH_KEYS))}, got {patch!r}"
            )
    for entry, ident in zip(entries, ids, strict=True):
        patch = patches.get(_entry_key(ident))
        if patch is None and not ident.get("key") and not ident.get("label"):
            patch = patches.get(ident["name"])
        if patch is None:
            out.append(entry)
            continue
        if patch.get("drop"):
            out.append({**entry, _DROPPED: True})
            continue
        entry = dict(entry)
        for part in ("params", "grid"):
            if patch.get(part):
                entry[part] = {**(entry.get(part) or {}), **patch[part]}
        if patch.get("label"):
            entry["label"] = patch["label"]
        out.append(entry)
    return out


def _apply_scale(exp: dict, block: dict, where: str, originals: list | None = None) -> dict:
    if not isinstance(block, dict):
        raise ConfigError(f"{where}: a scale block must be a mapping, got {block!r}")
    unknown = set(block) - _SCALE_KEYS
    if unknown:
        raise ConfigError(
            f"{where}: a scale block cannot set {', '.join(sorted(unknown))}; it may set "
            f"{', '.join(sorted(_SCALE_KEYS))}"
        )
    out = dict(exp)
    for key, value in block.items():
        if key == "grid":
            out["grid"] = {**(out.get("grid") or {}), **(value or {})}
        elif key == "mechanisms":
            out["mechanisms"] = _patch_mechanisms(out.get("mechanisms") or [], value, where,
                                                  originals)
        else:
            out[key] = value
    return out


def _set_path(node, path: tuple, value, where: str):
    """Set (or delete, for :data:`DELETE`) ``node[path]``, creating mappings on the way."""
    for i, part in enumerate(path[:-1]):
        if isinstance(node, list):
            node = node[int(part)]
            continue
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif isinstance(child, (dict, list)):
            child = node[part] = (dict if isinstance(child, dict) else list)(child)
        else:
            raise ConfigError(f"{where}: cannot set {'.'.join(map(str, path))}: "
                              f"{'.'.join(map(str, path[: i + 1]))} is not a mapping")
        node = child
    last = path[-1]
    if isinstance(node, list):
        node[int(last)] = value
    elif value is DELETE:
        node.pop(last, None)
    else:
        node[last] = value


def _apply_overrides(exp: dict, overrides: dict, where: str) -> tuple[dict, set]:
    """The command line's ``experiment.<path>=value`` over base + scale block; returns the
    result and the grid keys the command line forces."""
    out = {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
           for k, v in exp.items()}
    forced: set[str] = set()
    for dotted, value in overrides.items():
        path = tuple(str(dotted).split("."))
        if path[0] == "scales":  # already merged in
            continue
        if path[0] not in EXPERIMENT_KEYS:
            raise ConfigError(_unknown_key_message(path[0], where))
        try:
            _set_path(out, path, value, where)
        except (IndexError, ValueError):
            raise ConfigError(
                f"{where}: cannot set {dotted}: {path[0]} has {len(out.get(path[0]) or [])} "
                f"entry(ies) at this scale (the scale block's); replace the whole list instead "
                f"(experiment.{path[0]}=[...])"
            ) from None
        if path[0] == "grid" and len(path) > 1:
            forced.add(path[1])
        elif path[0] == "grid" and isinstance(value, dict):
            forced |= set(value)
    return out, forced


def _unknown_key_message(key: str, where: str) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(EXPERIMENT_KEYS), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"{where}: unknown experiment key {key!r}{hint}; keys: "
            f"{', '.join(sorted(EXPERIMENT_KEYS))}")



class Layers(NamedTuple):
    """An experiment at one scale, with the command line applied."""

    experiment: dict  # base, then scale block, then overrides; dropped entries removed
    forced: set  # the grid keys the command line sets (they beat every other grid)
    own: list  # the mechanism entries the experiment file states (before any layer)


def layer_experiment(experiment: dict, *, scale: str, overrides: dict | None = None,
                     file_mechanisms: list | None = None) -> Layers:
    """The experiment's base, then its ``scales[scale]`` block, then the command line's
    ``experiment.<path>`` ``overrides`` (:data:`DELETE` deletes): see
    :func:`privpub.experiments.spec.resolve_experiment` for the arguments. An entry the scale block
    drops is gone unless the command line edits it."""
    if not isinstance(experiment, dict) or not experiment.get("name"):
        raise ConfigError("the experiment config needs a 'name'")
    name = str(experiment["name"])
    where = f"experiment {name!r}"
    unknown = [k for k in experiment if k not in EXPERIMENT_KEYS]
    if unknown:
        raise ConfigError(_unknown_key_message(unknown[0], where))
    exp = dict(experiment)
    scales = exp.pop("scales", None) or {}
    if scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r}; known scales: {', '.join(SCALES)}")
    if not isinstance(scales, dict) or set(scales) - set(SCALES):
        raise ConfigError(f"{where}: scales must map {', '.join(SCALES)} to defaults")
    if scale in OPT_IN_SCALES and scale not in scales:
        raise ConfigError(f"{where} has no {scale} scale (only experiments with a "
                          f"scales.{scale} block run there)")
    own = [as_entry(m, "mechanism") for m in as_list(exp.get("mechanisms"))]
    overrides = overrides or {}
    block = dict(scales.get(scale) or {})
    if "mechanisms" in overrides:  # the command line's own list: nothing left to patch
        block.pop("mechanisms", None)
    exp = _apply_scale(exp, block, f"{where}, scale {scale}", file_mechanisms)
    exp, forced = _apply_overrides(exp, overrides, where)
    edited = {int(p[1]) for p in (str(k).split(".") for k in overrides)
              if p[0] == "mechanisms" and len(p) > 1 and p[1].isdigit()}
    if isinstance(exp.get("mechanisms"), list):
        exp["mechanisms"] = [
            {k: v for k, v in e.items() if k != _DROPPED} if isinstance(e, dict) else e
            for i, e in enumerate(exp["mechanisms"])
            if i in edited or not (isinstance(e, dict) and e.get(_DROPPED))
        ]
    if exp.get("name") != name:
        raise ConfigError(f"{where}: the name cannot be overridden")
    return Layers(exp, forced, own)
