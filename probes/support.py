"""What the probe tests share (``probes/tests``): whether the real datasets they need are
present, and a speed script of ``benchmarks/`` when a test compares with it (scripts, not a
package, so imported by path; a source checkout only)."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

__all__ = ["load_benchmark", "has_data", "needs_data"]

ROOT = Path(__file__).resolve().parents[1]


@cache
def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (loaded once per process)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def has_data(*names: str) -> bool:
    """True when every file of these real datasets is in the data directory, hash-checked
    (:func:`privpub.data.registry.check_dataset_files`; nothing is parsed). An unknown
    name is an error, not a skip."""
    from privpub.data.registry import check_dataset_files
    from privpub.errors import DataError

    try:
        check_dataset_files(names)
    except DataError:
        return False
    return True


def needs_data(*names: str) -> pytest.MarkDecorator:
    """Skip a test, with the reason, unless :func:`has_data` (``names``)."""
    import pytest

    return pytest.mark.skipif(not has_data(*names),
                              reason=f"needs PRIVPUB_DATA_DIR with {', '.join(names)}")
