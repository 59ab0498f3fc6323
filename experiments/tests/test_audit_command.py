"""``privpub audit`` (experiments/audit.py): audits as stored, code-keyed tasks, a witness
that replays, exit codes; the stored verdicts the report and the leaderboard read."""

import io
import json
import sys
import textwrap

import pytest

from privpub import registry
from privpub.audit.stored import audit_of, stored_audits, stored_verdicts
from privpub.experiments.audit import audit_jobs, audit_store
from privpub.experiments.console import main

#: A plug-in module as a user writes one: the README's first example (a Laplace degree
#: histogram of d_max + 1 bins, whose length reveals the maximum degree).
PLUGIN = textwrap.dedent('''
    from privpub.noise import laplace_mechanism
    from privpub.registry import EDGE_DP, register_mechanism
    from privpub.types import DegreeHistogram, Kind


    @register_mechanism("toy_cli_histogram", input_kind=Kind.GRAPH,
                        output_kind=Kind.DEGREE_HISTOGRAM, privacy=EDGE_DP)
    def toy_cli_histogram(graph, *, epsilon, rng, ledger=None):
        counts = graph.degree_histogram().counts
        return DegreeHistogram(laplace_mechanism(counts, sensitivity=4, epsilon=epsilon,
                                                 rng=rng, ledger=ledger, label="histogram"))
''')


def run(*argv):
    out = io.StringIO()
    code = main(["audit", *argv], out=out)
    return code, out.getvalue()


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "mylab_audit_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path / "mylab_audit_plugin.py"
    registry._MECHANISMS.pop("toy_cli_histogram", None)
    sys.modules.pop("mylab_audit_plugin", None)


def test_a_plugin_is_audited_stored_reused_reaudited_when_edited_and_replayed(plugin,
                                                                                tmp_path):
    results = str(tmp_path / "results")
    args = ("toy_cli_histogram", "--quick", "--plugins", "mylab_audit_plugin",
            "--results-dir", results, "--json")
    code, text = run(*args)
    first = json.loads(text)
    assert code == 1 and first["ran"] == 1 and first["stored"] == 0
    (audit,) = first["audits"]
    assert audit["verdict"] == "violated" and audit["epsilon_lower_bound"] > 1
    assert audit["caveat"] is None and audit["witness_id"]

    code, text = run(*args)  # unchanged code: read from the store, same exit code
    assert code == 1 and json.loads(text)["ran"] == 0 and json.loads(text)["stored"] == 1

    plugin.write_text(PLUGIN + "\n\ndef _helper():\n    return 1\n")  # an edit
    code, text = run(*args)
    assert code == 1 and json.loads(text)["ran"] == 1

    assert stored_verdicts(results)["toy_cli_histogram"][0] == "violated"
    records = stored_audits(results)
    assert audit_of(records, "toy_cli_histogram", {"epsilon": 0.5})["verdict"] == "violated"
    assert audit_of(records, "ldrc", {"epsilon": 1}) is None

    code, text = run("--replay", audit["witness_id"], "--results-dir", results, "--json",
                     "--plugins", "mylab_audit_plugin")
    replayed = json.loads(text)
    assert code == 1 and replayed["reproduced"] and replayed["neighbours"]
    assert replayed["lower_bound"] > 1


def test_a_stored_caveat_free_violation_read_back_with_nan_caveat_exits_1(plugin, tmp_path):
    """Parquet gives NaN for an empty caveat when part files disagree; NaN is not a caveat."""
    from privpub.registry import import_plugins

    results = tmp_path / "results"
    import_plugins(["mylab_audit_plugin"])
    ((name, config, cell, code),) = audit_jobs(["toy_cli_histogram"], mode="quick", seed=0)
    audit_store(results).write([{
        "experiment": "audit", "scale": "quick", "mechanism": name, "cell": cell,
        "base_seed": 0, "rep": 0, "metric": "epsilon_lower_bound", "value": 5.0,
        "status": "ok", "caveat": float("nan"), "verdict": "violated", "witness_id": cell,
        "params": json.dumps(config), "code_hash": code, "epsilon": 1.0, "written_at": 0.0,
        "label": name}])
    code_, text = run(name, "--quick", "--plugins", "mylab_audit_plugin", "--results-dir",
                      str(results))
    assert code_ == 1 and "VIOLATED without a caveat" in text


@pytest.mark.parametrize("argv", [["no_such_mechanism", "--quick"], ["mondrian", "--quick"],
                                  ["--plugins", "no_such_module_xyz", "--quick"],
                                  ["--replay", "0123456789ab"]])
def test_bad_input_is_one_line_and_exit_2(argv, tmp_path, capsys):
    code, _ = run(*argv, "--results-dir", str(tmp_path))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("privpub audit: ")


def test_no_stored_audits_is_empty(tmp_path):
    assert stored_audits(tmp_path) == [] and stored_verdicts(tmp_path) == {}


def _readme_example() -> str:
    """The Python block of the README's "Adding a mechanism" section."""
    from privpub.experiments.catalog import CHECKOUT

    section = (CHECKOUT / "README.md").read_text().split("## Adding a mechanism", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readmes_example_mechanism_is_not_refuted(tmp_path, monkeypatch):
    """The example a new user copies: its bins are public, so its length reveals nothing
    (the former d_max + 1 bins did: the plug-in test above is that version)."""
    (tmp_path / "readme_example_mech.py").write_text(_readme_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        code, text = run("laplace_histogram", "--quick", "--plugins", "readme_example_mech",
                         "--results-dir", str(tmp_path / "results"), "--json")
    finally:
        registry._MECHANISMS.pop("laplace_histogram", None)
        sys.modules.pop("readme_example_mech", None)
    (audit,) = json.loads(text)["audits"]
    assert code == 0 and audit["verdict"] in ("holds", "inconclusive"), audit
    assert audit["epsilon_lower_bound"] <= 1


def test_every_unknown_or_non_dp_name_is_said_before_any_audit_runs(tmp_path, capsys):
    """An unknown name among good ones stopped at the first; now every bad name is a line
    of one error, and nothing is audited."""
    code = main(["audit", "--quick", "truncation", "nosuch_mech", "mondrian", "theta_histogrm",
                 "--results-dir", str(tmp_path)], out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0] == "privpub audit: unknown mechanism 'nosuch_mech'"
    assert lines[1].startswith("unknown mechanism 'theta_histogrm' (did you mean "
                               "theta_histogram")
    assert lines[2] == ("mechanism 'mondrian' claims 'k-anonymity', not a DP notion: the "
                        "audit checks epsilon-DP claims only")
    assert lines[3].startswith("DP mechanisms: ") and "truncation" in lines[3]
    assert not (tmp_path / "audit").exists()
