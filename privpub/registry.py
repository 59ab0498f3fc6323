"""The registries: mechanisms (and baselines), metrics, and views between data kinds.

A mechanism is a plain function with keyword-only parameters and an explicit
``rng: numpy.random.Generator``, registered with its input kind, output kind and privacy
notion::

    @register_mechanism("randomized_response_edge", input_kind=Kind.BINARY_MATRIX,
                        output_kind=Kind.BINARY_MATRIX, privacy=EDGE_DP, paper="epasto2022")
    def randomized_response_edge(matrix, *, epsilon, rng, ledger=None): ...

Differentially private mechanisms take ``epsilon`` and an optional ``ledger``
(:class:`privpub.ledger.PrivacyLedger`) and spend every part of their budget through it.

A metric compares the truth with a release of the same kind: ``metric(truth, release)``,
where the runner obtains ``truth`` from the original dataset through a registered *view*
(e.g. graph -> degree histogram). Mechanisms, baselines and metrics register themselves
when their modules are imported. A lookup by name imports only the module that registers
the name (found in the sources without importing them, :func:`_index`), so a run pays for
the code it uses; :func:`load_plugins` imports them all (listing, unknown names).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privpub.errors import ConfigError, UnknownNameError
from privpub.types import Kind, kind_of

__all__ = [
    "EDGE_DP",
    "NODE_DP",
    "RECORD_DP",
    "K_ANONYMITY",
    "SMOOTH_K_ANONYMITY",
    "NO_PRIVACY",
    "DP_NOTIONS",
    "MechanismInfo",
    "MetricInfo",
    "register_mechanism",
    "register_metric",
    "register_view",
    "get_mechanism",
    "get_metric",
    "mechanisms",
    "metrics",
    "view",
    "view_function",
    "load_plugins",
    "import_plugins",
]

EDGE_DP = "edge-DP"
NODE_DP = "node-DP"
RECORD_DP = "record-DP"
K_ANONYMITY = "k-anonymity"
SMOOTH_K_ANONYMITY = "smooth-k-anonymity"
NO_PRIVACY = "none"
DP_NOTIONS = (EDGE_DP, NODE_DP, RECORD_DP)
_NOTIONS = (*DP_NOTIONS, K_ANONYMITY, SMOOTH_K_ANONYMITY, NO_PRIVACY)


@dataclass(frozen=True)
class MechanismInfo:
    """A registered mechanism or baseline.

    Attributes
    ----------
    name : str
        Registry name (also the ``conf/mechanism/<name>.yaml`` file name).
    func : callable
        ``func(data, *, rng, **params)``.
    input_kind, output_kind : str
        Data kinds (:class:`privpub.types.Kind`).
    privacy : str
        The privacy notion claimed: edge-DP, node-DP, record-DP, k-anonymity,
        smooth-k-anonymity or none.
    paper : str or None
        Key of the paper that proposes or uses it (e.g. ``"day2016"``).
    role : {"mechanism", "baseline", "reference"}
        What it is in the paper's comparison ("reference" = non-private yardstick).
    caveat : str, callable or None
        Why the claimed guarantee does not (or is not known to) hold, stored with every
        result row. None when the claim is shown to hold (by proof and tests). A callable
        ``caveat(params) -> str | None`` gives a caveat that depends on the parameters
        (e.g. qardaji2012's degree-sequence RPS holds its claim only with strict
        accounting); :meth:`caveat_for` evaluates it.
    seeds_of : str or None
        Another mechanism whose random streams this one draws (same dataset, parameters,
        repetition and base seed), for a baseline that only post-processes that mechanism's
        randomised step: epasto2022's non-smooth baseline releases the smooth algorithm's
        own clusters. None: its own streams.
    source : str or None
        The part of the paper it implements, e.g. ``"Sec 4.2, Algorithm 2"`` (``privpub
        show`` prints it; without it, the first section, algorithm or equation its
        docstring cites).
    """

    name: str
    func: Callable
    input_kind: str
    output_kind: str
    privacy: str
    paper: str | None = None
    role: str = "mechanism"
    caveat: str | Callable[[dict], str | None] | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    seeds_of: str | None = None
    source: str | None = None

    def caveat_for(self, params: dict) -> str | None:
        """The caveat of a call with ``params`` (defaults filled in for missing ones)."""
        if not callable(self.caveat):
            return self.caveat
        defaults = {k: v for k, v in self.parameters.items() if v is not inspect.Parameter.empty}
        return self.caveat({**defaults, **params})

    @property
    def is_dp(self) -> bool:
        return self.privacy in DP_NOTIONS

    @property
    def summary(self) -> str:
        doc = inspect.getdoc(self.func) or ""
        return doc.splitlines()[0] if doc else ""


@dataclass(frozen=True)
class MetricInfo:
    """A registered metric: ``func(truth, release, **params) -> float | dict[str, float]``."""

    name: str
    func: Callable
    kinds: tuple[str, ...]
    higher_is_better: bool
    label: str
    takes_rng: bool = False
    #: the random stream ``rng`` is drawn from: the metric's own name, or another metric's
    #: when both compute the same random quantity (a curve and its gap to the truth's), so
    #: that they agree and the quantity is computed once per release
    stream: str = ""


_MECHANISMS: dict[str, MechanismInfo] = {}
_METRICS: dict[str, MetricInfo] = {}
_VIEWS: dict[tuple[str, str], Callable] = {}


def _keyword_parameters(func: Callable) -> dict[str, Any]:
    """Keyword-only parameters of ``func`` with their defaults (``inspect._empty`` if none)."""
    sig = inspect.signature(func)
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in ("rng", "ledger")
    }


def register_mechanism(
    name: str,
    *,
    input_kind: str,
    output_kind: str,
    privacy: str,
    paper: str | None = None,
    role: str = "mechanism",
    caveat: str | Callable[[dict], str | None] | None = None,
    seeds_of: str | None = None,
    source: str | None = None,
):
    """Decorator registering a mechanism/baseline function under ``name`` (the arguments
    are :class:`MechanismInfo`'s)."""
    if input_kind not in Kind.ALL or output_kind not in Kind.ALL:
        raise ConfigError(f"{name}: unknown kind {input_kind!r} or {output_kind!r}")
    if privacy not in _NOTIONS:
        raise ConfigError(f"{name}: unknown privacy notion {privacy!r}; known: {_NOTIONS}")
    if role not in ("mechanism", "baseline", "reference"):
        raise ConfigError(f"{name}: role must be mechanism, baseline or reference")

    def decorate(func: Callable) -> Callable:
        sig = inspect.signature(func)
        if "rng" not in sig.parameters:
            raise ConfigError(f"mechanism {name!r} must take a keyword-only 'rng'")
        params = _keyword_parameters(func)
        if privacy in DP_NOTIONS and "epsilon" not in params:
            raise ConfigError(f"DP mechanism {name!r} must take a keyword-only 'epsilon'")
        if name in _MECHANISMS and _MECHANISMS[name].func is not func:
            raise ConfigError(f"mechanism name {name!r} registered twice")
        _MECHANISMS[name] = MechanismInfo(
            name, func, input_kind, output_kind, privacy, paper, role, caveat, params, seeds_of,
            source,
        )
        return func

    return decorate


def register_metric(name: str, *, kinds, higher_is_better: bool, label: str | None = None,
                    stream: str | None = None):
    """Decorator registering ``func(truth, release, ...)`` as metric ``name``.

    ``stream``: draw ``rng`` from metric ``stream``'s random stream instead of this metric's
    own (see :attr:`MetricInfo.stream`)."""
    kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)

    def decorate(func: Callable) -> Callable:
        takes_rng = "rng" in inspect.signature(func).parameters
        _METRICS[name] = MetricInfo(name, func, kinds, higher_is_better, label or name,
                                    takes_rng, stream or name)
        return func

    return decorate


def register_view(from_kind: str, to_kind: str):
    """Decorator registering how to derive the ``to_kind`` truth from a ``from_kind`` dataset."""

    def decorate(func: Callable) -> Callable:
        _VIEWS[(from_kind, to_kind)] = func
        return func

    return decorate


def _load_views() -> None:
    importlib.import_module("privpub.views")


def view(data, to_kind: str):
    """The truth of kind ``to_kind`` for dataset ``data`` (identity when the kinds match)."""
    from_kind = kind_of(data)
    if from_kind == to_kind:
        return data
    _load_views()
    try:
        return _VIEWS[(from_kind, to_kind)](data)
    except KeyError:
        raise ConfigError(
            f"no view from {from_kind} to {to_kind}: a metric on {to_kind} releases "
            f"cannot be computed for a {from_kind} dataset"
        ) from None


def view_function(from_kind: str, to_kind: str) -> Callable | None:
    """The registered view from ``from_kind`` to ``to_kind`` (None for the identity)."""
    _load_views()
    return None if from_kind == to_kind else _VIEWS.get((from_kind, to_kind))


def has_view(from_kind: str, to_kind: str) -> bool:
    _load_views()
    return from_kind == to_kind or (from_kind, to_kind) in _VIEWS


def _unknown(what: str, name: str, known) -> UnknownNameError:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return UnknownNameError(
        f"unknown {what} {name!r}.{hint} Known {what}s: {', '.join(sorted(known))}"
    )


def _lookup(what: str, name: str, table: dict):
    """``table[name]``, importing only the module that registers it (found by
    :func:`_index`), else every plugin module; unknown names list the known ones."""
    if name not in table:
        module = _index()[what].get(name)
        if module is not None:
            importlib.import_module(module)
        if name not in table:
            load_plugins()
    try:
        return table[name]
    except KeyError:
        raise _unknown(what, name, table) from None


def get_mechanism(name: str) -> MechanismInfo:
    """The registered mechanism ``name``; unknown names fail listing the known ones."""
    return _lookup("mechanism", name, _MECHANISMS)


def get_metric(name: str) -> MetricInfo:
    """The registered metric ``name``; unknown names fail listing the known ones."""
    return _lookup("metric", name, _METRICS)


def mechanisms() -> dict[str, MechanismInfo]:
    """All registered mechanisms and baselines, by name."""
    load_plugins()
    return dict(_MECHANISMS)


def metrics() -> dict[str, MetricInfo]:
    """All registered metrics, by name."""
    load_plugins()
    return dict(_METRICS)


_PLUGIN_PACKAGES = ("privpub.metrics", "privpub.mechanisms", "privpub.baselines")
_loaded = False
_REGISTERS = re.compile(r"register_(mechanism|metric)\(\s*[\"']([A-Za-z0-9_]+)[\"']")


def _skipped(name: str) -> bool:
    """Modules and sub-packages the plugin scan leaves out: private ones and tests."""
    return name.startswith(("_", "test"))


def _scan(packages) -> dict[str, dict[str, str]]:
    """{"mechanism" / "metric": {name: module}} for every ``register_mechanism("name"`` /
    ``register_metric("name"`` in the sources of ``packages``, their sub-packages included
    (a sub-package is a folder with an ``__init__.py``), without importing them."""
    found: dict[str, dict[str, str]] = {"mechanism": {}, "metric": {}}

    def walk(folder: Path, module: str) -> None:
        for path in sorted(folder.iterdir()):
            if _skipped(path.name):
                continue
            if path.is_dir() and (path / "__init__.py").is_file():
                walk(path, f"{module}.{path.name}")
            elif path.suffix == ".py":
                try:
                    text = path.read_text(encoding="utf-8")
                except OSError:
                    continue
                for what, name in _REGISTERS.findall(text):
                    found[what].setdefault(name, f"{module}.{path.stem}")

    for pkg_name in packages:
        spec = importlib.util.find_spec(pkg_name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            walk(Path(folder), pkg_name)
    return found


@functools.cache
def _index() -> dict[str, dict[str, str]]:
    """:func:`_scan` of the plugin packages, so a run imports only the modules it uses:
    start-up time and worker memory (sklearn, numba) stay small. Names registered in a loop
    are not found here; looking them up imports every module."""
    return _scan(_PLUGIN_PACKAGES)


def _import_tree(pkg_name: str) -> None:
    """Import every module of package ``pkg_name`` and of its sub-packages (depth first),
    leaving out :func:`_skipped` names."""
    pkg = importlib.import_module(pkg_name)
    for mod in pkgutil.iter_modules(pkg.__path__):
        if _skipped(mod.name):
            continue
        if mod.ispkg:
            _import_tree(f"{pkg_name}.{mod.name}")
        else:
            importlib.import_module(f"{pkg_name}.{mod.name}")


def load_plugins(extra=()) -> None:
    """Import every module of the ``metrics``, ``mechanisms`` and ``baselines`` packages
    (sub-packages included, e.g. ``privpub.mechanisms.rps``), and the modules named in ``extra``
    (e.g. a user's own mechanisms: ``plugins=[mylab.mech]`` on the command line).

    Modules and sub-packages whose name starts with ``test`` or ``_`` (e.g. ``tests``) are
    skipped. Importing is what registers; each module is imported once per process.
    """
    global _loaded
    if not _loaded:
        _load_views()
        importlib.import_module("privpub.verify")
        for pkg_name in _PLUGIN_PACKAGES:
            _import_tree(pkg_name)
        _loaded = True  # only once every module imported: a failure is retried, not hidden
    import_plugins(extra)


def import_plugins(modules=()) -> None:
    """Import a user's own plugin modules, which register their mechanisms and metrics; the
    project's own are imported when first looked up.

    Each entry is a module name (``plugins=[mylab.mech]``, importable from ``sys.path``) or
    the path of a ``.py`` file anywhere (``plugins=[~/lab/my_mech.py]``), imported as the
    module named after its file (``my_mech``); a file is imported once per process, so the
    run's workers may import the same list again.
    """
    for module in modules:
        module = str(module)
        is_file = module.endswith(".py") or "/" in module or "\\" in module
        try:
            if is_file:
                _import_file(Path(module).expanduser())
            else:
                importlib.import_module(module)
        except ConfigError:
            raise
        except ImportError as exc:
            raise ConfigError(f"cannot import plugin module {module!r}: {exc}") from None
        except SyntaxError as exc:
            raise ConfigError(f"cannot import plugin module {module!r}: {exc.msg} in "
                              f"{exc.filename}, line {exc.lineno}") from None
        except Exception as exc:  # the module raised while it was imported
            raise ConfigError(f"cannot import plugin module {module!r}: {_where(exc)}") from None


def _import_file(path: Path):
    """Import the plugin file ``path`` as the module named after its stem (once)."""
    import sys

    path = path.resolve()
    if not path.is_file() or path.suffix != ".py":
        raise ConfigError(f"plugin file {str(path)!r} does not exist (plugins= takes a module "
                          "name or the path of a .py file)")
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None:
        if Path(getattr(loaded, "__file__", "") or "").resolve() == path:
            return loaded
        raise ConfigError(f"plugin file {str(path)!r}: a module named {name!r} is already "
                          "imported from elsewhere; rename the file")
    if not name.isidentifier():
        raise ConfigError(f"plugin file {str(path)!r}: its name must be a Python identifier")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _where(exc: BaseException) -> str:
    """``Type: message (at file, line n)``: the innermost frame that is not the import
    machinery's."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<frozen")]
    where = f" (at {frames[-1].filename}, line {frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
