"""``privpub show NAME`` (experiments/show.py), run in-process via the console's ``main``."""

import inspect
import io
import json

import pytest
import yaml

from privpub.experiments import show
from privpub.experiments.catalog import CHECKOUT, CONF_DIR
from privpub.experiments.console import main
from privpub.experiments.spec import resolve_experiment
from privpub.registry import get_mechanism, get_metric

CONF = CONF_DIR


def run(*argv):
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def _where(func) -> str:
    """The file of ``func`` relative to the checkout, as the registry finds it."""
    return str(CHECKOUT.joinpath(inspect.getsourcefile(func)).resolve()
               .relative_to(CHECKOUT))


@pytest.fixture(scope="module")
def ldrc():
    code, text = run("show", "ldrc")
    assert code == 0, text
    return text


def test_show_ldrc_names_its_code_config_tests_experiments_and_caveat(ldrc):
    info = get_mechanism("ldrc")
    assert f"{_where(info.func)}:" in ldrc                      # code file and line
    assert "mechanism=ldrc (no YAML" in ldrc                   # its option, from the registry
    assert "audit        defaults at epsilon = 1 (one run ~2 ms)" in ldrc
    assert info.privacy in ldrc and info.input_kind in ldrc and info.output_kind in ldrc
    assert "sala2011_fig4" in ldrc
    assert "results/sala2011_fig4/{smoke,small,paper}/dk2_distance_vs_epsilon.png" in ldrc
    tests = [line.split()[-1] for line in ldrc.splitlines() if "test_" in line]
    assert tests and all((CHECKOUT / t).is_file() for t in tests)
    assert any("ldrc" in (CHECKOUT / t).read_text() for t in tests)
    caveat = " ".join(info.caveat_for({}).split()[:6])
    assert caveat in " ".join(ldrc.split())
    assert "Sec 4.3, Theorem 4 (from its docstring" in ldrc   # no source= registered
    assert "epsilon (required)" in ldrc and "partition_width=1" in ldrc


def test_show_json_says_the_same(ldrc):
    code, text = run("show", "ldrc", "--json")
    assert code == 0
    (entry,) = json.loads(text)["found"]
    assert entry["kind"] == "mechanism" and entry["config"]["file"] is None
    assert entry["config"]["values"] == {"name": "ldrc", **dict.fromkeys(
        get_mechanism("ldrc").parameters)}
    assert f"{entry['code']['file']}:{entry['code']['line']}" in ldrc
    assert entry["source"] == {"text": "Sec 4.3, Theorem 4", "from": "docstring"}
    assert entry["caveat"] == get_mechanism("ldrc").caveat and not entry["caveat_per_parameter"]
    assert [e["experiment"] for e in entry["experiments"]] == ["sala2011_fig4"]
    assert set(entry["experiments"][0]["scales"]) == {"smoke", "small", "paper"}
    assert all(t in ldrc for t in entry["tests"])


def test_unknown_name_is_one_line_with_close_matches_and_exit_2(capsys):
    code, text = run("show", "ldcr")
    assert code == 2 and text == ""
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "ldrc" in err and "'ldcr'" in err


def test_registered_source_and_a_caveat_that_depends_on_the_parameters():
    code, text = run("show", "toy_drop")
    assert code == 0
    assert "Sec 9.9, Algorithm 9 (register_mechanism(source=...))" in text
    assert "experiments  none" in text
    code, text = run("show", "hay_degree_sequence")
    assert "depends on the parameters" in text


def test_show_says_a_mechanisms_registered_audit_blind_spot_and_leaderboard_reason():
    code, text = run("show", "rps_degree_histogram")
    flat = " ".join(text.split())
    assert code == 0 and "neighbours node_rewire" in flat
    assert "accounting=strict degree_bound=n_minus_1 at epsilon = 1 (one run ~6 ms)" in flat
    info = get_mechanism("rps_degree_histogram")
    (label, why), = info.blind_spots.items()
    assert f"blind spot {label.partition(' ')[2]}: {' '.join(why.split()[:8])}" in flat
    code, text = run("show", "theta_cumulative_oracle")
    flat = " ".join(text.split())
    assert "audit not audited (not DP)" in flat
    assert f"leaderboard never ranked: {get_mechanism('theta_cumulative_oracle').unranked}" in flat


def test_show_an_experiment_counts_trials_as_the_runner():
    path = CONF / "experiment" / "sala2011_fig4.yaml"
    exp = yaml.safe_load(path.read_text())
    code, text = run("show", "sala2011_fig4", "--json")
    assert code == 0
    (entry,) = json.loads(text)["found"]
    assert entry["file"] == "conf/experiment/sala2011_fig4.yaml" and entry["figure"] == "Fig. 4"
    assert entry["claims"] == [c["id"] for c in exp["claims"]]
    for scale, row in entry["scales"].items():
        spec = resolve_experiment(exp, scale=scale)
        assert row["trials"] == spec.n_trials
        assert row["datasets"] == list(dict.fromkeys(c.dataset for c in spec.cells))
        assert row["figures"] == [f"results/sala2011_fig4/{scale}/dk2_distance_vs_epsilon.png"]
    code, text = run("show", "sala2011_fig4")
    assert "ldrc (LDRC)" in text and "drc_order_of_magnitude_below_dkpa" in text


def test_show_a_dataset_and_a_metric(tmp_path):
    code, text = run("show", "as_caida", "--data-dir", str(tmp_path), "--json")
    assert code == 0
    (entry,) = json.loads(text)["found"]
    assert entry["kind"] == "dataset" and entry["loader"]["line"] > 0
    (file,) = entry["files"]
    assert file["status"] == "missing" and len(file["sha256"]) == 64
    assert file["url"].startswith("http") and str(tmp_path) in file["expected_path"]
    assert "sala2011_fig4" in [e["experiment"] for e in entry["experiments"]]
    code, text = run("show", "dk2_distance")
    info = get_metric("dk2_distance")
    assert code == 0 and f"{_where(info.func)}:" in text and "sala2011_fig4" in text


def test_a_new_kind_is_looked_up_too(monkeypatch):
    kind = show.ShowKind("task", lambda n, c: n == "toy_task",
                         lambda n, c: {"kind": "task", "name": n},
                         lambda d: [f"{d['name']}  (task)"], lambda c: ["toy_task"])
    monkeypatch.setitem(show.KINDS, "task", kind)
    assert run("show", "toy_task") == (0, "toy_task  (task)\n")


@pytest.mark.parametrize("doc, source", [
    ("LDRC: DRC then isotonic regression (sala2011 Sec 4.3, Theorem 4).", "Sec 4.3, Theorem 4"),
    ("The quality function of Eq. (1) and Algorithm 2.", "Eq. (1) and Algorithm 2"),
    ("See Section 5.1 of the paper.", "Section 5.1"),
    ("No reference here.", None),
])
def test_docstring_source(doc, source):
    def f():
        pass

    f.__doc__ = doc
    assert show.docstring_source(f) == source
