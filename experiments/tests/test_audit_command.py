"""``privpub audit`` (experiments/audit.py): audits as stored, code-keyed trials, a witness
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


# --------------------------------------------------------------------------- robust as a run
#: Two plug-ins that misbehave: one never returns (it touches the file named by
#: $PRIVPUB_TEST_STARTED first, so a test can wait for it), one eats memory until stopped.
FAULTY = textwrap.dedent('''
    import os
    import time

    import numpy as np

    from privpub.registry import NODE_DP, register_mechanism
    from privpub.types import Kind


    @register_mechanism("toy_sleep_forever", input_kind=Kind.GRAPH,
                        output_kind=Kind.DEGREE_HISTOGRAM, privacy=NODE_DP)
    def toy_sleep_forever(graph, *, epsilon, rng, ledger=None):
        if os.environ.get("PRIVPUB_TEST_STARTED"):
            open(os.environ["PRIVPUB_TEST_STARTED"], "w").close()
        while True:
            time.sleep(60)


    @register_mechanism("toy_memory_hog", input_kind=Kind.GRAPH,
                        output_kind=Kind.DEGREE_HISTOGRAM, privacy=NODE_DP)
    def toy_memory_hog(graph, *, epsilon, rng, ledger=None):
        hog = []
        while True:
            hog.append(np.ones(2**23))  # 64 MB
            time.sleep(0.02)
''')


@pytest.fixture
def faulty(tmp_path):
    """The faulty plug-ins as a file outside ``sys.path`` (a name of its own per test: the
    pool's workers outlive a test)."""
    import uuid

    path = tmp_path / "elsewhere" / f"faulty_{uuid.uuid4().hex[:8]}.py"
    path.parent.mkdir()
    path.write_text(FAULTY)
    yield path
    for name in ("toy_sleep_forever", "toy_memory_hog"):
        registry._MECHANISMS.pop(name, None)
    sys.modules.pop(path.stem, None)


@pytest.mark.parametrize("progress", ["true", "false"])
def test_a_plugin_that_never_returns_is_one_failed_row_under_trial_timeout(
        faulty, tmp_path, capsys, monkeypatch, progress):
    """The audit's worker is stopped at trial_timeout: an error row, exit 2, a start line and
    (unless progress=false) progress lines naming what runs meanwhile."""
    from privpub.experiments import audit as audit_command

    monkeypatch.setattr(audit_command, "PROGRESS_SECONDS", 0.5)
    code, text = run("toy_sleep_forever", "--quick", "--plugins", str(faulty),
                     f"results_dir={tmp_path / 'r'}", "trial_timeout=2", f"progress={progress}")
    err = capsys.readouterr().err
    assert code == 2 and "ERROR toy_sleep_forever: exceeded trial_timeout=2 s" in text
    assert "privpub audit: 1 configuration(s) of 1 mechanism(s) to audit" in err
    assert "trial_timeout=2 s" in err.splitlines()[0]
    ticks = [line for line in err.splitlines() if line.startswith("  ... ")]
    if progress == "true":
        assert ticks and "0 of 1 done" in ticks[0] and "running: toy_sleep_forever" in ticks[0]
    else:
        assert not ticks
    (record,) = stored_audits(tmp_path / "r")
    assert record["verdict"] == "error" and record["error"] == "exceeded trial_timeout=2 s"


def test_a_plugin_that_eats_memory_fails_alone_and_the_next_audit_goes_on(faulty, plugin,
                                                                          tmp_path):
    code, text = run("toy_memory_hog", "toy_cli_histogram", "--quick", "--plugins",
                     str(faulty), "mylab_audit_plugin", "--results-dir", str(tmp_path / "r"),
                     "--trial-memory", "1500", "--json")
    audits = {a["mechanism"]: a for a in json.loads(text)["audits"]}
    assert code == 1  # the histogram's violation decides; the failed audit is a row
    assert audits["toy_memory_hog"]["verdict"] == "error"
    assert audits["toy_memory_hog"]["error"].startswith("exceeded trial_memory=1500 MB")
    assert audits["toy_cli_histogram"]["verdict"] == "violated"


def test_ctrl_c_exits_130_with_one_line_and_leaves_no_process(faulty, tmp_path):
    """SIGINT to the process group while a plug-in's audit runs in a worker."""
    import os
    import signal
    import subprocess
    import time

    started = tmp_path / "started"
    env = {**os.environ, "PRIVPUB_TEST_STARTED": str(started)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "privpub.experiments.console", "audit", "toy_sleep_forever",
         "--quick", "--plugins", str(faulty), "--results-dir", str(tmp_path / "r")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not started.exists():  # the mechanism runs in a worker
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("privpub audit: interrupted: 0 of 1 audit")
    assert "Traceback" not in err and out == ""
    deadline = time.monotonic() + 30
    while True:  # the workers and the forkserver end with the command
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "a process of the audit is left behind"
        time.sleep(0.1)


def test_the_printed_replay_command_works_as_printed(tmp_path):
    """A plug-in FILE outside sys.path, audits under --results-dir: the printed command
    replays in a process that never imported the plug-in (the witness imports its file)."""
    import shlex

    path = tmp_path / "elsewhere" / "outside_cli_histogram.py"
    path.parent.mkdir()
    path.write_text(PLUGIN.replace("toy_cli_histogram", "toy_outside_histogram"))
    try:
        code, text = run("toy_outside_histogram", "--quick", "--plugins", str(path),
                         "--results-dir", str(tmp_path / "r"))
        assert code == 1
        (line,) = [x for x in text.splitlines() if x.startswith("VIOLATED")]
        command = shlex.split(line.split("replay: ", 1)[1])
        assert command[:2] == ["privpub", "audit"] and "--results-dir" in command
        registry._MECHANISMS.pop("toy_outside_histogram", None)  # as a fresh process
        sys.modules.pop(path.stem, None)
        out = io.StringIO()
        code = main(command[1:], out=out)
        assert code == 1 and "reproduced run for run: True" in out.getvalue()
        assert registry.get_mechanism("toy_outside_histogram").registered_by == path.stem
    finally:
        registry._MECHANISMS.pop("toy_outside_histogram", None)
        sys.modules.pop(path.stem, None)


def test_a_results_dir_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    code, _ = run("--quick", "ldrc", f"results_dir={tmp_path / 'file'}")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"privpub audit: results_dir {str(tmp_path / 'file')!r} is a "
                                 "file, not a directory; pass results_dir=<a writable "
                                 "directory>"]


@pytest.mark.parametrize("argv, message", [
    (["trial_timeout=0"], "argument --trial-timeout: a positive number of seconds"),
    (["--trial-memory", "-1"], "argument --trial-memory: a positive number of MB"),
    (["n_jobs=0"], "n_jobs must be a positive integer"),
])
def test_bad_limits_are_one_line_and_exit_2(argv, message, tmp_path, capsys):
    code, _ = run("--quick", "ldrc", "--results-dir", str(tmp_path), *argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_limits_and_progress_as_key_value_like_run_py():
    from privpub.experiments.console import _parser, parse_args

    args = parse_args(*_parser(), ["audit", "progress=false", "trial_timeout=20",
                                   "trial_memory=inf"])
    assert args.progress is False and args.trial_timeout == 20
    assert args.trial_memory == float("inf") and args.executor == "process"
    args = parse_args(*_parser(), ["audit"])
    assert args.progress is True and args.trial_timeout is None


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
