"""The experiment files of ``conf/experiment``: where they are, how they are read, and which
paper and figure each reproduces (shared by ``privpub list``, ``reproduce`` and ``show``).

Only the standard library is imported at module level, so ``privpub --help`` stays fast.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import re
from pathlib import Path

__all__ = [
    "CONF_DIR",
    "CHECKOUT",
    "source_path",
    "conf_dir",
    "natural_key",
    "figure_of",
    "paper_of",
    "load_experiments",
    "read_yaml",
    "scale_datasets",
    "label_groups",
]

#: The packaged configs, ``privpub.conf``: the checkout's conf/ in an editable install,
#: site-packages/privpub/conf in a wheel.
CONF_DIR = Path(str(importlib.resources.files("privpub.conf")))
#: The source checkout (run.py, docs/, the tests) of an editable install; None when privpub
#: is installed from a wheel, where what needs it degrades (docs/design.md, "One way in").
CHECKOUT = CONF_DIR.parent if (CONF_DIR.parent / "run.py").is_file() else None


def source_path(module: str) -> Path:
    """The file of a ``privpub`` module, or the directory of a package, wherever it is
    installed (``privpub.plots`` is the checkout's plots/ or site-packages/privpub/plots)."""
    spec = importlib.util.find_spec(module)
    if spec is None:
        raise ModuleNotFoundError(module)
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin)


def conf_dir(arg: str | None) -> Path:
    """The config directory (``--conf-dir``, else the packaged :data:`CONF_DIR`); a
    directory without experiment files is a usage error."""
    conf = Path(arg) if arg else CONF_DIR
    if not (conf / "experiment").is_dir():
        raise SystemExit(f"privpub: no experiment configs in {conf / 'experiment'}")
    return conf


def natural_key(text: str):
    """Sort key that orders ``fig3`` before ``fig10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


_FIGURE = re.compile(r"_(fig|figure|table|tab)_?([0-9]+[a-z]?)$", re.IGNORECASE)


def figure_of(name: str, exp: dict) -> str:
    """The paper figure or table an experiment reproduces: its ``figure:`` key, else derived
    from ``<paper>_<fig3c|table2>`` ("Fig. 3c", "Table 2"); "default" for the embedded one."""
    if exp.get("figure"):
        return str(exp["figure"])
    m = _FIGURE.search(name)
    if m:
        kind = "Table" if m.group(1).lower().startswith("tab") else "Fig."
        return f"{kind} {m.group(2)}"
    return "default" if name == "default" else "-"


def paper_of(name: str, exp: dict) -> str:
    """The paper key of an experiment: its ``paper:``, else its name's prefix."""
    return str(exp.get("paper") or name.split("_")[0])


def read_yaml(path: Path):
    """A YAML file's content, read with libyaml's safe parser when PyYAML has it (the
    pure-Python one takes ~1 s for all the experiment files)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(path.read_text(), Loader=loader)  # noqa: S506 - a safe loader


def load_experiments(conf: Path) -> list[tuple[Path, dict | None, str | None]]:
    """``(path, experiment or None, error or None)`` of every experiment file, in natural
    order; a file that cannot be read is one entry with its error."""
    out = []
    for path in sorted((conf / "experiment").glob("*.yaml"), key=lambda p: natural_key(p.stem)):
        try:
            exp = read_yaml(path)
            if not isinstance(exp, dict):
                raise ValueError("not a mapping")
            out.append((path, exp, None))
        except Exception as exc:  # a broken file is one row, not the end of the listing
            out.append((path, None, f"cannot read {path.name}: {exc}"))
    return out


def scale_datasets(exp: dict, scale: str) -> list[str]:
    """Dataset names of the experiment at ``scale`` from the YAML alone (when resolution
    fails, so that the data column still says something)."""
    block = (exp.get("scales") or {}).get(scale) or {}
    items = block.get("datasets", exp.get("datasets")) or []
    if not isinstance(items, list):
        items = [items]
    names = [d if isinstance(d, str) else (d or {}).get("name") for d in items]
    return [n for n in dict.fromkeys(names) if isinstance(n, str)]


def label_groups(conf: Path) -> list[list[str]]:
    """The series labels each experiment file draws together (its mechanisms' labels, else
    their names), for looks that tell them apart (:func:`privpub.plots.series.label_styles`)."""
    groups = []
    for _, exp, _ in load_experiments(conf):
        entries = (exp or {}).get("mechanisms") or []
        labels = [e if isinstance(e, str) else (e or {}).get("label") or (e or {}).get("name")
                  for e in (entries if isinstance(entries, list) else [])]
        groups.append([str(x) for x in labels if x])
    return groups
