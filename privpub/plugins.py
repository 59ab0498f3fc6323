"""Installed plug-ins: what other distributions add to privpub through entry points.

A distribution declares, in its ``pyproject.toml``::

    [project.entry-points."privpub.mechanisms"]
    my_histogram = "mylab.mechanisms"

and privpub finds it with no flag: a mechanism's or a metric's entry point names the module
whose import registers it (:mod:`privpub.registry`), a dataset's the module that calls
:func:`privpub.data.register_dataset`, a leaderboard task's a package whose folder holds task files
(``<task>.yaml``, as ``conf/task/``) or ``module:ATTR`` naming a folder or a list of files
(:func:`privpub.experiments.leaderboard.task_files`). The entry point's name is only its
label. This module imports nothing heavy: ``privpub --help`` lists plug-in leaderboard tasks.
Rationale: docs/design.md ("Plug-ins").
"""

from __future__ import annotations

import sys
from typing import Any

from privpub.errors import ConfigError

__all__ = ["ENTRY_POINT_GROUPS", "entry_points", "load_entry_points", "entry_point_error",
           "import_error"]

#: The entry-point group of each kind of plug-in.
ENTRY_POINT_GROUPS = {"mechanism": "privpub.mechanisms", "metric": "privpub.metrics",
                      "dataset": "privpub.datasets", "task": "privpub.tasks"}

_FOUND: dict[tuple, list] = {}  # (group, sys.path) -> entry points
_LOADED: dict[tuple[str, str, str], Any] = {}  # (group, name, value) -> loaded object


def entry_points(kind: str) -> list:
    """The installed entry points of ``kind``'s group (:data:`ENTRY_POINT_GROUPS`), sorted
    by name, one per name and value however often its distribution is on ``sys.path``."""
    from importlib.metadata import entry_points as installed

    group = ENTRY_POINT_GROUPS[kind]
    key = (group, tuple(sys.path))
    if key not in _FOUND:
        unique = {(ep.name, ep.value): ep for ep in installed(group=group)}
        _FOUND[key] = [unique[k] for k in sorted(unique)]
    return _FOUND[key]


def _distribution(ep) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"


def entry_point_error(ep, problem: str) -> ConfigError:
    """One line naming the plug-in ``ep``, its distribution and ``problem``."""
    return ConfigError(f"the plug-in {ep.name!r} = {ep.value!r} (entry point group {ep.group}) "
                       f"of the installed distribution {_distribution(ep)}: {problem}; fix or "
                       "uninstall that distribution")


def load_entry_points(kind: str) -> dict[str, Any]:
    """Load (import) the installed plug-ins of ``kind``: ``{entry point name: the object it
    names}`` (a module, or the ``module:ATTR`` object), each loaded once per process. One
    that cannot be loaded is a one-line :class:`~privpub.errors.ConfigError` naming its
    distribution and entry point."""
    out = {}
    for ep in entry_points(kind):
        key = (ep.group, ep.name, ep.value)
        if key not in _LOADED:
            try:
                _LOADED[key] = ep.load()
            except Exception as exc:  # whatever the plug-in raised while it was imported
                raise entry_point_error(ep, f"cannot be loaded: {import_error(exc)}") from None
        out[ep.name] = _LOADED[key]
    return out


def import_error(exc: BaseException) -> str:
    """What went wrong importing a plug-in, on one line: ``Type: message (at file, line
    n)``, the innermost frame that is not the import machinery's."""
    import traceback

    if isinstance(exc, SyntaxError):
        return f"{exc.msg} in {exc.filename}, line {exc.lineno}"
    if isinstance(exc, ImportError):
        return str(exc)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<frozen")]
    where = f" (at {frames[-1].filename}, line {frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
