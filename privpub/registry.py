"""The registries: mechanisms (and baselines), metrics, and views between data kinds.

A mechanism is a plain function with keyword-only parameters and an explicit
``rng: numpy.random.Generator``, registered with its input kind, output kind and privacy
notion::

    @register_mechanism("randomized_response_edge", input_kind=Kind.BINARY_MATRIX,
                        output_kind=Kind.BINARY_MATRIX, privacy=EDGE_DP, paper="epasto2022")
    def randomized_response_edge(matrix, *, epsilon, rng, ledger=None): ...

Differentially private mechanisms take ``epsilon`` and an optional ``ledger``
(:class:`privpub.ledger.PrivacyLedger`) and spend every part of their budget through it.
Everything else privpub knows about a mechanism is said in its registration too (caveat,
paper section, audit settings, blind spot, why no leaderboard ranks it: :class:`MechanismInfo`).

A metric compares the truth with a release of the same kind: ``metric(truth, release)``,
where the runner obtains ``truth`` from the original dataset through a registered *view*
(e.g. graph -> degree histogram). Mechanisms, baselines and metrics register themselves
when their modules are imported: the built-in ones are the modules that
``privpub.mechanisms``, ``privpub.baselines`` and ``privpub.metrics`` list in their
``MODULES``; an installed distribution adds its own through the entry-point groups
``privpub.mechanisms`` and ``privpub.metrics`` (:mod:`privpub.plugins`); ``plugins=`` names
any other module or file. A lookup by name imports only the module that registers the name
(:func:`_index`, built once by importing the listed modules and cached on disk), so a run
pays for the code it uses; :func:`load_plugins` imports them all (listing, unknown names).
Rationale: docs/design.md ("Plug-ins").
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privpub.errors import ConfigError, UnknownNameError
from privpub.plugins import ENTRY_POINT_GROUPS, entry_points, import_error, load_entry_points
from privpub.types import Kind, kind_of

__all__ = [
    "EDGE_DP",
    "NODE_DP",
    "RECORD_DP",
    "EDGE_LDP",
    "RECORD_APPROX_DP",
    "K_ANONYMITY",
    "SMOOTH_K_ANONYMITY",
    "NO_PRIVACY",
    "DP_NOTIONS",
    "central_notion",
    "neighbour_notion",
    "implied_central_epsilon",
    "describe_notion",
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
    "BUILT_IN_PACKAGES",
    "built_in_modules",
    "built_in_mechanisms",
    "built_in_parameters",
    "entry_points",
    "load_entry_points",
    "ENTRY_POINT_GROUPS",
]

EDGE_DP = "edge-DP"
NODE_DP = "node-DP"
RECORD_DP = "record-DP"
#: local edge-DP (edge-LDP): every user randomises her own adjacency list, and two lists
#: that differ in one entry are neighbours (qin2017, the LDPGen paper)
EDGE_LDP = "edge-LDP"
#: approximate record-DP: (epsilon, delta)-DP with delta > 0 (the mechanism's ``delta``
#: parameter) under record-DP's neighbours; the marginal synthesizers that measure with
#: Gaussian noise under zCDP (AIM, MST). Never ranked with pure epsilon-DP: its own table.
RECORD_APPROX_DP = "record-(eps,delta)-DP"
K_ANONYMITY = "k-anonymity"
SMOOTH_K_ANONYMITY = "smooth-k-anonymity"
NO_PRIVACY = "none"
DP_NOTIONS = (EDGE_DP, NODE_DP, RECORD_DP, EDGE_LDP, RECORD_APPROX_DP)
_NOTIONS = (*DP_NOTIONS, K_ANONYMITY, SMOOTH_K_ANONYMITY, NO_PRIVACY)

#: A local notion, the central notion it implies, and the factor on epsilon: an edge of
#: the graph is an entry of BOTH its endpoints' adjacency lists, so adding or removing it
#: changes two users' inputs and an eps-edge-LDP protocol in which both endpoints report
#: is 2 eps-edge-DP on the whole graph (sequential composition over the two users).
_CENTRAL = {EDGE_LDP: (EDGE_DP, 2.0)}


def central_notion(notion: str) -> str:
    """The central notion a claim of ``notion`` implies (itself for a central notion)."""
    return _CENTRAL.get(notion, (notion, 1.0))[0]


#: An approximate notion and the pure notion whose neighbour relation it shares.
_PURE = {RECORD_APPROX_DP: RECORD_DP}


def neighbour_notion(notion: str) -> str:
    """The notion whose neighbour relation a claim of ``notion`` is tested on: the central
    notion of a local one, the pure notion of an approximate one, else itself."""
    return _PURE.get(notion) or central_notion(notion)


def implied_central_epsilon(notion: str, epsilon: float) -> float:
    """The epsilon of the central guarantee an ``epsilon`` claim of ``notion`` implies:
    ``2 epsilon`` edge-DP for ``epsilon`` edge-LDP, ``epsilon`` for a central notion."""
    return _CENTRAL.get(notion, (notion, 1.0))[1] * float(epsilon)


def describe_notion(notion: str) -> str:
    """``notion``, and for a local one the central guarantee it implies
    (``"edge-LDP (local: 2 eps edge-DP on the whole graph)"``)."""
    if notion not in _CENTRAL:
        return notion
    return (f"{notion} (local: {implied_central_epsilon(notion, 1.0):g} eps "
            f"{central_notion(notion)} on the whole graph)")


@dataclass(frozen=True)
class MechanismInfo:
    """A registered mechanism or baseline: everything privpub knows about it.

    Attributes
    ----------
    name : str
        Registry name (also its ``mechanism=<name>`` option on the command line).
    func : callable
        ``func(data, *, rng, **params)``.
    input_kind, output_kind : str
        Data kinds (:class:`privpub.types.Kind`).
    privacy : str
        The privacy notion claimed: edge-DP, node-DP, record-DP, edge-LDP (local: each
        user randomises her own adjacency list; :func:`implied_central_epsilon`),
        k-anonymity, smooth-k-anonymity or none.
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
    parameters : dict
        Its keyword parameters (``rng`` and ``ledger`` aside) with their defaults
        (``inspect.Parameter.empty`` for a required one): the defaults of a run.
    seeds_of : str or None
        Another mechanism whose random streams this one draws (same dataset, parameters,
        repetition and base seed), for a baseline that only post-processes that mechanism's
        randomised step: epasto2022's non-smooth baseline releases the smooth algorithm's
        own clusters. None: its own streams.
    source : str or None
        The part of the paper it implements, e.g. ``"Sec 4.2, Algorithm 2"`` (``privpub
        show`` prints it; without it, the first section, algorithm or equation its
        docstring cites).
    neighbourhood : str or None
        The neighbouring relation of its claim when it is not its notion's default
        (:mod:`privpub.audit.neighbours`): qardaji2012's node-DP keeps the node set
        (``"node_rewire"``).
    audit : dict
        How ``privpub audit`` runs it (:mod:`privpub.audit.configs`): ``configurations``, a
        tuple of parameter overrides (one audit each, ``epsilon`` added; required parameters
        without a default get a value here), and ``cost_ms``, the time of one run on the
        audit's tiny inputs (a slower mechanism gets fewer runs). Either may be absent.
    blind_spots : dict
        Why the audit cannot refute a caveated configuration, by its label
        (:func:`privpub.audit.stored.config_label`; the bare name for every configuration).
    caveat_summary : str or None
        The caveat in one line, for the README's caveat table (:mod:`privpub.caveats`).
    unranked : str or None
        Why no leaderboard ranks it although its kinds and notion fit (e.g. day2016's
        introspection oracles: "not a release method").
    registered_by : str
        The module whose import registers it (what a lookup by name imports).
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
    neighbourhood: str | None = None
    audit: dict[str, Any] = field(default_factory=dict)
    blind_spots: dict[str, str] = field(default_factory=dict)
    caveat_summary: str | None = None
    unranked: str | None = None
    registered_by: str = ""

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
    #: the module whose import registers it
    registered_by: str = ""


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


def _registering_module(default: str) -> str:
    """The module being imported whose top-level code runs the registration (the innermost
    module frame on the stack, so a module registering through another module's helper is
    still the one that registers), else ``default`` (a registration outside any import,
    e.g. in a test function or a script)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            name = frame.f_globals.get("__name__")
            module = sys.modules.get(name) if name and name != "__main__" else None
            if module is not None and vars(module) is frame.f_globals:
                return name
        frame = frame.f_back
    return default


def _audit_settings(name: str, audit, params: dict) -> dict[str, Any]:
    """``audit=`` checked: known keys, configurations of known parameters, a positive cost."""
    if audit is None:
        return {}
    if not isinstance(audit, dict) or set(audit) - {"configurations", "cost_ms"}:
        raise ConfigError(f"{name}: audit= takes a dict with 'configurations' and/or "
                          f"'cost_ms', got {audit!r}")
    out: dict[str, Any] = {}
    if "configurations" in audit:
        configs = tuple(dict(c) for c in audit["configurations"])
        for config in configs:
            unknown = sorted(set(config) - set(params))
            if unknown or "epsilon" in config:
                raise ConfigError(f"{name}: audit configuration {config} sets "
                                  f"{unknown or ['epsilon']}, which is not a parameter it "
                                  "may set (the audit sets epsilon)")
        out["configurations"] = configs or ({},)
    if "cost_ms" in audit:
        cost = audit["cost_ms"]
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not cost > 0:
            raise ConfigError(f"{name}: audit cost_ms must be a positive number, got {cost!r}")
        out["cost_ms"] = float(cost)
    return out


def _blind_spots(name: str, blind_spot, params: dict) -> dict[str, str]:
    """``blind_spot=`` by configuration label: a sentence for every configuration (the
    bare name), or ``{"k=v k2=v2": sentence}`` for the configurations with those
    overrides (``""``: every configuration)."""
    if blind_spot is None:
        return {}
    if isinstance(blind_spot, str):
        blind_spot = {"": blind_spot}
    if not isinstance(blind_spot, dict):
        raise ConfigError(f"{name}: blind_spot= takes a sentence or a dict of them")
    out = {}
    for overrides, sentence in blind_spot.items():
        pairs = [part.partition("=") for part in str(overrides).split()]
        bad = [k for k, eq, _ in pairs if not eq or k not in params]
        if bad or not isinstance(sentence, str) or not sentence.strip():
            raise ConfigError(f"{name}: blind_spot key {overrides!r} must be parameter=value "
                              "pairs of its parameters, with a sentence")
        out[name + "".join(f" {k}={v}" for k, _, v in sorted(pairs))] = sentence
    return out


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
    neighbourhood: str | None = None,
    audit: dict | None = None,
    blind_spot: str | dict[str, str] | None = None,
    caveat_summary: str | None = None,
    unranked: str | None = None,
):
    """Decorator registering a mechanism/baseline function under ``name``.

    The arguments are :class:`MechanismInfo`'s, but ``blind_spot``: a sentence (every
    configuration) or ``{"parameter=value ...": sentence}``, stored by configuration label
    as :attr:`MechanismInfo.blind_spots`. A ``caveat_summary`` needs a ``caveat``.
    """
    if input_kind not in Kind.ALL or output_kind not in Kind.ALL:
        raise ConfigError(f"{name}: unknown kind {input_kind!r} or {output_kind!r}")
    if privacy not in _NOTIONS:
        raise ConfigError(f"{name}: unknown privacy notion {privacy!r}; known: {_NOTIONS}")
    if role not in ("mechanism", "baseline", "reference"):
        raise ConfigError(f"{name}: role must be mechanism, baseline or reference")
    if caveat_summary is not None and caveat is None:
        raise ConfigError(f"{name}: caveat_summary= summarises a caveat; it has none")
    for key, value in (("source", source), ("neighbourhood", neighbourhood),
                       ("caveat_summary", caveat_summary), ("unranked", unranked)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ConfigError(f"{name}: {key}= must be a non-empty string, got {value!r}")

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
            source, neighbourhood, _audit_settings(name, audit, params),
            _blind_spots(name, blind_spot, params), caveat_summary, unranked,
            _registering_module(func.__module__),
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
                                    takes_rng, stream or name,
                                    _registering_module(func.__module__))
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
    """``table[name]``, importing only what registers it: the built-in module the index
    names (:func:`_index`), else the installed plug-ins of its entry-point group, else
    every built-in module; unknown names list the known ones."""
    if name not in table:
        module = _index()[what].get(name)
        if module is not None:
            importlib.import_module(module)
        if name not in table:
            load_entry_points(what)
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
    """All registered mechanisms and baselines, by name (installed plug-ins included)."""
    load_plugins()
    return dict(_MECHANISMS)


def metrics() -> dict[str, MetricInfo]:
    """All registered metrics, by name (installed plug-ins included)."""
    load_plugins()
    return dict(_METRICS)


# --------------------------------------------------------------------------- built-ins
#: The packages whose ``MODULES`` (names relative to the package) are the built-in modules
#: that register mechanisms, baselines and metrics: an explicit list, so a module may
#: register names in a loop (a family of variants) and a lookup still finds them.
BUILT_IN_PACKAGES = ("privpub.metrics", "privpub.mechanisms", "privpub.baselines")
_loaded = False


@functools.cache
def built_in_modules() -> tuple[str, ...]:
    """Every built-in registering module, fully qualified, in import order."""
    return tuple(f"{package}.{module}" for package in BUILT_IN_PACKAGES
                 for module in importlib.import_module(package).MODULES)


def built_in_mechanisms() -> dict[str, MechanismInfo]:
    """The mechanisms the built-in modules register (not plug-ins), by name."""
    listed = set(built_in_modules())
    return {n: i for n, i in mechanisms().items() if i.registered_by in listed}


def _source_files(modules) -> list[Path]:
    """The files whose content decides what ``modules`` register: each module's file, the
    ``__init__.py`` of the packages on its way (which hold ``MODULES``) and this module,
    found without importing the modules."""
    files = [Path(__file__)]
    for package in BUILT_IN_PACKAGES:
        folder = Path(importlib.import_module(package).__path__[0])
        files.append(folder / "__init__.py")
        for module in modules:
            if not module.startswith(package + "."):
                continue
            parts = module[len(package) + 1:].split(".")
            files += [folder.joinpath(*parts[:i], "__init__.py") for i in range(1, len(parts))]
            path = folder.joinpath(*parts)
            files.append(path / "__init__.py" if path.is_dir() else path.with_suffix(".py"))
    return list(dict.fromkeys(files))


def _index_key(modules) -> str | None:
    """A digest of the paths, sizes and modification times of :func:`_source_files` and of
    the Python version: an edited module gets a new index. None if a file is missing."""
    stats = [f"{sys.version_info[:2]}"]
    try:
        for path in _source_files(modules):
            st = path.stat()
            stats.append(f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        return None
    return hashlib.sha256("\n".join(stats).encode()).hexdigest()[:32]


def _build_index(modules) -> dict[str, dict]:
    """Import every built-in module; which module registers which name, and each
    mechanism's keyword parameters (the command line's ``mechanism.<param>`` keys)."""
    for module in modules:
        importlib.import_module(module)
    listed = set(modules)
    mechs = {n: i for n, i in _MECHANISMS.items() if i.registered_by in listed}
    return {
        "mechanism": {n: i.registered_by for n, i in mechs.items()},
        "metric": {n: i.registered_by for n, i in _METRICS.items() if i.registered_by in listed},
        "parameters": {n: list(i.parameters) for n, i in mechs.items()},
    }


@functools.cache
def _index() -> dict[str, dict]:
    """``{"mechanism": {name: module}, "metric": {name: module}, "parameters": {mechanism:
    [parameter, ...]}}`` of the built-in modules, so a run imports only the modules it uses
    (start-up time and worker memory: sklearn, numba).

    Built by importing every built-in module once; then read from privpub's disk cache
    (:func:`privpub.cache.cache_dir`, ``registry/index-<key>.json``, key
    :func:`_index_key`), written atomically. A stale entry can only cost time: a name it
    misses or misplaces is found by importing everything. With ``PRIVPUB_CACHE_DIR=off``
    each process builds it on its first lookup of a name it has not imported.
    """
    from privpub.cache import cache_dir

    modules = built_in_modules()
    root, key = cache_dir(), _index_key(modules)
    path = None if root is None or key is None else root / "registry" / f"index-{key}.json"
    if path is not None:
        try:
            index = json.loads(path.read_text(encoding="utf-8"))
            if all(isinstance(index.get(k), dict) for k in ("mechanism", "metric", "parameters")):
                return index
        except (OSError, ValueError, AttributeError):
            pass
    index = _build_index(modules)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.stem}.{uuid.uuid4().hex[:8]}.json")
            tmp.write_text(json.dumps(index, sort_keys=True), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:  # a read-only or full disk only costs the next process the imports
            pass
    return index


def built_in_parameters() -> dict[str, list[str]]:
    """Every built-in mechanism's keyword parameters, by name, without importing them."""
    return dict(_index()["parameters"])


def load_plugins(extra=()) -> None:
    """Import every built-in module (:func:`built_in_modules`), the installed plug-ins of
    the ``privpub.mechanisms`` and ``privpub.metrics`` entry-point groups, and the modules
    named in ``extra`` (e.g. a user's own mechanisms: ``plugins=[mylab.mech]`` on the
    command line). Importing is what registers; each module is imported once per process.
    """
    global _loaded
    if not _loaded:
        _load_views()
        importlib.import_module("privpub.verify")
        for module in built_in_modules():
            importlib.import_module(module)
        _loaded = True  # only once every module imported: a failure is retried, not hidden
    for what in ("mechanism", "metric"):
        load_entry_points(what)
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
        except Exception as exc:  # the module raised while it was imported
            raise ConfigError(f"cannot import plugin module {module!r}: "
                              f"{import_error(exc)}") from None


def _import_file(path: Path):
    """Import the plugin file ``path`` as the module named after its stem (once)."""
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
