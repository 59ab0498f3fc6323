"""Which code a result depends on: content hashes of the modules behind a cell.

What is hashed, how imports are followed and what is left out: docs/design.md
(Experiments: "Code-aware reuse").
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
from pathlib import Path

__all__ = [
    "module_closure",
    "module_hash",
    "function_fingerprint",
    "code_fingerprint",
    "describe_changes",
    "clear_cache",
]

#: Top-level packages whose modules are hashed (plus a plugin's own top-level package).
PROJECT_PACKAGES = ("privpub",)

#: Modules every result depends on, whatever the cell: the seeds.
COMMON_MODULES = ("privpub.experiments.seeding",)


@functools.cache
def _source(module: str) -> tuple[str, str] | None:
    """(path, source) of a module, or None if it is not a Python source file."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return spec.origin, Path(spec.origin).read_text(encoding="utf-8")
    except OSError:
        return None


#: Keywords of ``register_mechanism(...)`` that describe a mechanism without changing what
#: it computes or stores (:class:`privpub.registry.MechanismInfo`): left out of the hash
#: like docstrings, so rewording a blind spot recomputes nothing.
DESCRIPTIVE_KEYWORDS = frozenset({"source", "caveat_summary", "blind_spot", "unranked"})


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    """``tree`` without docstrings and without the :data:`DESCRIPTIVE_KEYWORDS` of its
    ``register_mechanism(...)`` calls (modified in place)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "register_mechanism":
            node.keywords = [k for k in node.keywords if k.arg not in DESCRIPTIVE_KEYWORDS]
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


def _called(call: ast.Call) -> str | None:
    """The name of the function ``call`` calls (``f(...)`` or ``m.f(...)``)."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _imports(nodes, package: str) -> list[tuple[str, tuple[str, ...] | None]]:
    """(module, imported names or None) of the import statements among ``nodes``."""
    found: list[tuple[str, tuple[str, ...] | None]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.append((base, tuple(alias.name for alias in node.names)))
    return found


def _code_hash(tree: ast.AST) -> str:
    code = ast.dump(_strip_docstrings(tree), annotate_fields=False, include_attributes=False)
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def _package(module: str, path: str) -> str:
    return module if path.endswith("__init__.py") else module.rpartition(".")[0]


@functools.cache
def _parsed(module: str):
    """(code hash, imports, re-exports, is a package) of one module; None if not source.

    ``re-exports`` maps a name that a package's ``__init__`` imports at its top level to the
    (module, name) it comes from."""
    found = _source(module)
    if found is None:
        return None
    path, text = found
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError:
        return hashlib.sha256(text.encode()).hexdigest()[:16], (), {}, False
    package = _package(module, path)
    exports = {}
    for base, names in _imports(tree.body, package):
        for name in names or ():
            exports[name] = (base, name)
    imports = tuple(dict.fromkeys(_imports(ast.walk(tree), package)))
    return _code_hash(tree), imports, exports, path.endswith("__init__.py")


def module_hash(module: str) -> str | None:
    """Hash of one module's code (docstrings, comments and layout ignored)."""
    parsed = _parsed(module)
    return parsed[0] if parsed else None


def _closure(roots, packages: set[str]) -> set[str]:
    seen: set[str] = set()
    followed: set[tuple] = set()
    todo = list(roots)
    while todo:
        module, names = todo.pop()
        if (module, names) in followed or module.split(".")[0] not in packages:
            continue
        followed.add((module, names))
        parsed = _parsed(module)
        if parsed is None:
            continue
        _, imports, exports, is_package = parsed
        if is_package and names:  # from pkg import a, b: follow a and b, not all of pkg
            whole = False
            for name in names:
                if _source(f"{module}.{name}") is not None:
                    todo.append((f"{module}.{name}", None))
                elif name in exports:
                    source, original = exports[name]
                    todo.append((source, (original,)))
                else:  # defined in the package's __init__ itself
                    whole = True
            if not whole:
                continue
        if module not in seen:
            seen.add(module)
            todo.extend(imports)
    return seen


@functools.cache
def module_closure(root: str) -> tuple[str, ...]:
    """``root`` and every project module it imports, transitively, sorted."""
    return tuple(sorted(_closure([(root, None)], {*PROJECT_PACKAGES, root.split(".")[0]})))


def function_fingerprint(func) -> dict[str, str]:
    """{name: hash} of one function (its own code) and of the closure of what it imports,
    in its body or at the top of its module, but not of the rest of its module."""
    import inspect
    import textwrap

    module = func.__module__
    found = _source(module)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):  # no source: depend on its whole module
        return {m: module_hash(m) for m in module_closure(module)}
    package = _package(module, found[0]) if found else module.rpartition(".")[0]
    roots = _imports(ast.walk(tree), package)
    if found:
        roots += _imports(ast.parse(found[1]).body, package)
    closure = _closure(roots, {*PROJECT_PACKAGES, module.split(".")[0]}) - {module}
    return {f"{module}:{func.__qualname__}": _code_hash(tree),
            **{m: module_hash(m) for m in closure}}


def code_fingerprint(modules, functions=()) -> tuple[str, dict[str, str]]:
    """(combined hash, {module or function: hash}) of the closure of ``modules``, the common
    modules and ``functions`` (see :func:`function_fingerprint`)."""
    closure = sorted({m for root in [*modules, *COMMON_MODULES] for m in module_closure(root)})
    hashes = {m: module_hash(m) for m in closure}
    for func in functions:
        hashes.update(function_fingerprint(func))
    combined = hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:16]
    return combined, hashes


def describe_changes(old: dict[str, str] | None, new: dict[str, str]) -> list[str]:
    """The files (or ``file:function``) whose code differs between two fingerprints."""
    if not old:
        return []
    changed = sorted(m for m in set(old) | set(new) if old.get(m) != new.get(m))
    return [_display(m) for m in changed]


def _display(name: str) -> str:
    """``privpub.noise`` -> ``privpub/noise.py``; a package -> ``pkg/__init__.py``."""
    module, _, function = name.partition(":")
    parts = module.split(".")
    found = _source(module)
    if found and found[0].endswith("__init__.py"):
        path = "/".join([*parts, "__init__.py"])
    else:
        path = "/".join(parts) + ".py"
    return f"{path}:{function}" if function else path


def clear_cache() -> None:
    """Forget parsed modules (a run re-reads the sources, which may have been edited)."""
    for cached in (_source, _parsed, module_closure):
        cached.cache_clear()
