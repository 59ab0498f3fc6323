"""Where an audited mechanism came from, so that its witness replays in a fresh process.

An audit result and its witness carry the mechanism's *origin*
(:func:`origin_of`): the module that registered it, the ``.py`` file it was read from (a
plug-in outside privpub) and, for an installed plug-in, the distribution whose entry point
imports it. :func:`import_origin` imports it again, by module name when that name still
finds the same file, else from the file, so ``privpub audit --replay <id>`` needs no
``--plugins``. Rationale: docs/audit.md ("Stored audits").
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from privpub.errors import ConfigError
from privpub.registry import MechanismInfo

__all__ = ["origin_of", "import_origin", "is_plugin_module"]


def is_plugin_module(module: str) -> bool:
    """Whether ``module`` is a plug-in's (not privpub's own, not a script's ``__main__``)."""
    return bool(module) and module.split(".")[0] != "privpub" and module != "__main__"


def origin_of(info: MechanismInfo) -> dict:
    """``{"module": ..., "file": ..., "distribution": ...}`` of a registered mechanism: the
    module whose import registered it; for a plug-in, also the absolute path of that
    module's file and, when an installed entry point (:mod:`privpub.plugins`) imports it,
    ``"<distribution> <version>"``. A built-in's origin is its module alone (no machine
    path in the results)."""
    module = info.registered_by or info.func.__module__
    origin = {"module": module}
    if not is_plugin_module(module):
        return origin
    file = getattr(sys.modules.get(module), "__file__", None)
    if file:
        origin["file"] = str(Path(file).resolve())
    distribution = _entry_point_distribution(module)
    if distribution:
        origin["distribution"] = distribution
    return origin


def _entry_point_distribution(module: str) -> str | None:
    from privpub.plugins import entry_points

    for ep in entry_points("mechanism"):
        root = ep.value.split(":")[0].strip()
        if module == root or module.startswith(root + "."):
            dist = getattr(ep, "dist", None)
            return f"{dist.name} {dist.version}" if dist is not None else None
    return None


def _finds(module: str, file: str) -> bool:
    """Whether importing ``module`` by name would load ``file``."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    return bool(spec and spec.origin) and Path(spec.origin).resolve() == Path(file)


def import_origin(origin: dict | None) -> None:
    """Import the plug-in module of ``origin`` (:func:`origin_of`) unless it is loaded:
    by name when that finds its file (or it has no file), else from its file. Nothing for
    a built-in (a lookup by name finds it). A :class:`~privpub.errors.ConfigError` saying
    where the mechanism came from when neither works."""
    from privpub.registry import import_plugins

    origin = origin or {}
    module, file = origin.get("module", ""), origin.get("file")
    if not is_plugin_module(module) or module in sys.modules:
        return
    if file is None or _finds(module, file):
        import_plugins([module])
    elif Path(file).is_file():
        import_plugins([file])
    else:
        where = f"the file {file!r}, which does not exist any more"
        if origin.get("distribution"):
            where += f" (installed from the distribution {origin['distribution']})"
        raise ConfigError(f"it was registered by the module {module!r} from {where}")
