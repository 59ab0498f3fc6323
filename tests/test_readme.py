"""The README must stay true: its worked example and every `python run.py` command run here."""

import inspect
import re
import sys
from pathlib import Path

import pytest

from privpub.experiments.runner import run_experiment
from privpub.experiments.spec import resolve_experiment
from privpub.experiments.store import ResultStore
from privpub.registry import get_mechanism

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_starts_with_the_two_commands():
    first = _blocks("bash")[0]
    assert "pip install -e . && python run.py" in first
    assert "python -m pytest" in first


def test_worked_mechanism_example_runs(tmp_path, monkeypatch):
    code = next(b for b in _blocks("python") if "register_mechanism" in b)
    name = re.search(r'register_mechanism\("(\w+)"', code).group(1)
    (tmp_path / "readme_example_mech.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("readme_example_mech", None)
    module = "readme_example_mech"
    __import__(module)
    assert get_mechanism(name).parameters == {"epsilon": inspect.Parameter.empty,
                                              "max_degree": 100}
    spec = resolve_experiment(
        {
            "name": "readme",
            "datasets": ["karate"],
            "mechanisms": [name],
            "grid": {"epsilon": [0.5, 5]},
            "metrics": ["l1"],
            "repetitions": 2,
        },
        scale="paper",
    )
    summary = run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(module,))
    assert not summary.failed, summary.describe()
    rows = ResultStore(summary.store).load()
    rows = rows[~rows["noise_free"].astype(bool)]  # the noise-free twin has its own test
    assert len(rows) == 4 and rows["epsilon_spent"].tolist() == rows["epsilon"].tolist()
    # more budget, less error
    mean = rows.groupby("epsilon")["value"].mean()
    assert mean[5] < mean[0.5]


def _run_commands() -> list[str]:
    """Every `python run.py ...` line of the README's bash blocks (after the first block)."""
    found = []
    for block in _blocks("bash")[1:]:
        for line in block.splitlines():
            line = line.split(" # ")[0].split("   #")[0].strip()
            if line.startswith("python run.py"):
                found.append(line)
    for code in re.findall(r"`(python run\.py [^`]+)`", README.read_text()):
        found.append(code)
    return list(dict.fromkeys(found))


def _smoke(command: str, results: Path) -> list[str] | None:
    """The command's arguments at smoke scale into ``results``, or None if it cannot run
    here (a placeholder: ``...`` or a ``/path/to/`` file; SLURM; every experiment at once)."""
    import shlex

    args = shlex.split(command)[2:]
    if "..." in command or "/path/to/" in command or "slurm" in command or "glob(*" in command:
        return None
    args = [a for a in args if not a.startswith(("scale=", "results_dir=", "n_jobs="))]
    return [*args, "scale=smoke", f"results_dir={results}", "progress=false"]


def test_readme_lists_run_commands():
    commands = _run_commands()
    assert len(commands) >= 8
    assert any("add_mechanisms" in c for c in commands)
    assert any("glob(" in c for c in commands)


def _distinct_at_smoke() -> list[str]:
    """The README's commands, one per distinct smoke-scale command line."""
    seen, out = set(), []
    for command in _run_commands():
        key = tuple(_smoke(command, Path("R")) or (command,))
        if key not in seen:
            seen.add(key)
            out.append(command)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("command", _distinct_at_smoke())
def test_readme_run_commands_work_at_smoke(command, tmp_path):
    """Every `python run.py` command of the README runs (at smoke scale) and writes what it
    says: its experiment's rows, and figures in the experiment's own or a variant directory."""
    import os
    import subprocess

    args = _smoke(command, tmp_path / "res")
    if args is None:
        pytest.skip("placeholder, SLURM or every experiment: checked elsewhere")
    if "adult_binary" in command and not os.environ.get("PRIVPUB_DATA_DIR"):
        pytest.skip("needs the real data directory (PRIVPUB_DATA_DIR)")
    env = dict(os.environ)
    if "laplace_histogram" in command:  # the README's worked example, as a plug-in file
        code = next(b for b in _blocks("python") if "register_mechanism" in b)
        (tmp_path / "lab").mkdir()
        (tmp_path / "lab" / "laplace_histogram.py").write_text(code)
        args = [a for a in args if not a.startswith("plugins=")]
        args.append(f"plugins=[{tmp_path / 'lab' / 'laplace_histogram.py'}]")
    proc = subprocess.run([sys.executable, str(README.parent / "run.py"), *args],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    stores = list((tmp_path / "res").glob("*/smoke/store"))
    assert stores and all(ResultStore(s).load().shape[0] > 0 for s in stores)
    assert list((tmp_path / "res").glob("*/smoke/**/*.png"))
