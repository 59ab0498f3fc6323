"""The README's worked example (adding a mechanism) must stay true: it is run here."""

import re
import sys
from pathlib import Path

import yaml

from experiments.runner import run_experiment
from experiments.spec import resolve_experiment
from experiments.store import ResultStore
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
    config = yaml.safe_load(next(b for b in _blocks("yaml") if "name:" in b))
    (tmp_path / "readme_example_mech.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("readme_example_mech", None)
    module = "readme_example_mech"
    __import__(module)
    info = get_mechanism(config["name"])
    assert set(config) - {"name"} <= set(info.parameters)
    spec = resolve_experiment(
        {
            "name": "readme",
            "datasets": ["karate"],
            "mechanisms": [config["name"]],
            "grid": {"epsilon": [0.5, 5]},
            "metrics": ["l1"],
            "repetitions": 2,
        },
        scale="paper",
    )
    summary = run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(module,))
    assert not summary.failed, summary.describe()
    rows = ResultStore(summary.store).load()
    assert len(rows) == 4 and rows["epsilon_spent"].tolist() == rows["epsilon"].tolist()
    # more budget, less error
    mean = rows.groupby("epsilon")["value"].mean()
    assert mean[5] < mean[0.5]
