"""Leaderboards: tasks, qualification from the registry, plug-ins, cell reuse, the command."""

import importlib
import io
import json
import re
import sys
import textwrap

import pandas as pd
import pytest
import yaml

from privpub import registry
from privpub.errors import ConfigError
from privpub.experiments import leaderboard
from privpub.experiments.console import main
from privpub.experiments.leaderboard import (
    STORE_PREFIX,
    compile_task,
    load_task,
    qualifying,
    task_names,
)
from privpub.experiments.runner import run_experiment, store_dir
from privpub.experiments.spec import resolve_experiment
from privpub.experiments.store import ResultStore
from privpub.registry import import_plugins, mechanisms
from privpub.tests import plugin_dist

#: A plug-in written to a file outside the checkout: a node-DP degree sequence (Laplace on
#: the sorted degrees, sensitivity 2 (n - 1) under node neighbours: one node changes its own
#: degree and one degree of each other node).
PLUGIN = '''
import numpy as np
from privpub.noise import laplace_mechanism
from privpub.registry import NODE_DP, register_mechanism
from privpub.types import DegreeSequence, Kind


@register_mechanism("outside_laplace_sequence", input_kind=Kind.GRAPH,
                    output_kind=Kind.DEGREE_SEQUENCE, privacy=NODE_DP, paper=None)
def outside_laplace_sequence(graph, *, epsilon, rng, ledger=None):
    """Sorted degree sequence plus Laplace noise (a plug-in from outside the checkout)."""
    degrees = np.sort(np.asarray(graph.degrees(), dtype=float))
    n = max(degrees.size - 1, 1)
    noisy = laplace_mechanism(degrees, sensitivity=2.0 * n, epsilon=epsilon, rng=rng,
                              ledger=ledger, label="degrees")
    return DegreeSequence(noisy)
'''

#: A tiny task (degree sequences on karate) whose cells are qardaji2012_fig4's at smoke.
TINY_TASK = {
    "name": "tiny_sequences",
    "title": "tiny node-DP degree sequences",
    "input_kind": "graph",
    "output_kinds": ["degree_sequence"],
    "notions": ["node-DP", "none"],
    "metric": "ks",
    "secondary": [],
    "headline": {"epsilon": 1},
    "datasets": ["karate"],
    "grid": {"epsilon": [0.1, 1]},
    "repetitions": 2,
    "claims": [{
        "id": "rps_best", "text": "RPS is the best node-DP degree sequence",
        "source": "a test", "kind": "best", "metric": "ks", "among_notion": "node-DP",
        "expect": "rps_degree_sequence", "holds_in": 0.5,
    }],
}


@pytest.fixture
def plugin_module(tmp_path_factory, monkeypatch):
    """The plug-in file in a directory outside the checkout, importable by module name."""
    folder = tmp_path_factory.mktemp("outside_checkout")
    (folder / "outside_mech.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(folder))
    yield "outside_mech"
    # gone with its folder: a later run in this process would send it to its workers
    registry._MECHANISMS.pop("outside_laplace_sequence", None)
    sys.modules.pop("outside_mech", None)


@pytest.fixture
def tiny_tasks(tmp_path, monkeypatch):
    """A task directory holding only :data:`TINY_TASK`."""
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "tiny_sequences.yaml").write_text(yaml.safe_dump(TINY_TASK, allow_unicode=True))
    monkeypatch.setattr(leaderboard, "TASK_DIR", folder)
    return folder


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A distribution installed (as pip would) with a mechanism, a dataset and a task
    plug-in, found through its entry points."""
    yield plugin_dist.install(monkeypatch, tmp_path / "site", "toy-privpub-lab", {
        "privpub.mechanisms": {"mech": "toy_lab.mech"},
        "privpub.datasets": {"ring": "toy_lab.data"},
        "privpub.tasks": {"tasks": "toy_lab.tasks"},
    }, {"toy_lab/__init__.py": "", "toy_lab/mech.py": plugin_dist.MECHANISM,
        "toy_lab/data.py": plugin_dist.DATASET, "toy_lab/tasks/__init__.py": "",
        "toy_lab/tasks/toy_plugin_task.yaml": plugin_dist.TASK})
    plugin_dist.uninstall(tmp_path / "site")


def test_an_installed_task_and_mechanism_join_the_leaderboards_with_no_flag(installed):
    assert "toy_plugin_task" in task_names()
    task = load_task("toy_plugin_task")
    ranked, _ = qualifying(task)
    assert {"toy_node_count_histogram", "theta_histogram"} <= set(ranked)
    (spec,) = compile_task(task, "smoke")
    assert {c.dataset for c in spec.cells} == {"toy_ring"}  # the plug-in's dataset
    assert "toy_node_count_histogram" in qualifying(load_task("node_dp_degree"))[0]


def test_a_task_plugin_that_is_no_package_or_reuses_an_id_is_one_line(tmp_path, monkeypatch):
    site = tmp_path / "site"
    plugin_dist.install(monkeypatch, site, "toy-bad-tasks", {
        "privpub.tasks": {"bad": "toy_bad_tasks"}}, {"toy_bad_tasks.py": "x = 1\n"})
    try:
        with pytest.raises(ConfigError, match="toy-bad-tasks 0.1.*names a package of task"):
            task_names()
        (site / "toy_bad_tasks.py").unlink()
        plugin_dist.uninstall(site)
        plugin_dist.write_distribution(site, "toy-bad-tasks", {
            "privpub.tasks": {"bad": "toy_bad_tasks"}}, {
            "toy_bad_tasks/__init__.py": "", "toy_bad_tasks/node_dp_degree.yaml": "name: x\n"})
        importlib.invalidate_caches()
        with pytest.raises(ConfigError) as err:
            task_names()
        assert "\n" not in str(err.value) and "has the id of" in str(err.value)
    finally:
        plugin_dist.uninstall(site)


def test_every_task_loads_and_compiles_at_smoke():
    assert {"node_dp_degree", "dp_synthetic_graph", "sparse_anonymization", "private_topk",
            "private_tree", "table_release"} <= set(task_names())
    for name in task_names():
        task = load_task(name)
        specs = compile_task(task, "smoke")
        assert specs and all(s.name == STORE_PREFIX + name for s in specs)
        datasets = {c.dataset for s in specs for c in s.cells}
        from privpub.data import get_dataset_spec

        assert all(get_dataset_spec(d).synthetic for d in datasets), (name, datasets)


def test_qualification_comes_from_the_registry():
    task = load_task("node_dp_degree")
    ranked, left_out = qualifying(task)
    assert {"theta_cumulative_histogram", "truncation", "flowgraph", "rps_degree_sequence",
            "hay_degree_sequence"} <= set(ranked)
    assert "theta_cumulative_oracle" in left_out and "oracle" in left_out[
        "theta_cumulative_oracle"]
    assert "original_degree_histogram" in left_out  # a reference
    registry = mechanisms()
    assert all(registry[n].privacy in task.notions for n in ranked)


def test_a_plugin_from_outside_the_checkout_joins_a_task_by_name(plugin_module):
    task = load_task("node_dp_degree")
    assert "outside_laplace_sequence" not in qualifying(task)[0]
    import_plugins([plugin_module])
    ranked, _ = qualifying(task, ["outside_laplace_sequence"])
    assert "outside_laplace_sequence" in ranked  # no edit of the task, no YAML
    cells = [c for s in compile_task(task, "smoke") for c in s.cells]
    assert {c.mechanism for c in cells} >= {"outside_laplace_sequence", "rps_degree_sequence"}


def test_add_of_a_mechanism_that_does_not_fit_says_why():
    with pytest.raises(ConfigError, match="outputs ranking"):
        qualifying(load_task("node_dp_degree"), ["global_priv_topk"])
    with pytest.raises(ConfigError, match="its input is not table"):
        qualifying(load_task("private_tree"), ["randomized_response_edge"])


#: A plug-in that fits no task: a degree histogram of a graph that claims record-DP.
RECORD_DP_GRAPH_PLUGIN = '''
from privpub.noise import laplace_mechanism
from privpub.registry import RECORD_DP, register_mechanism
from privpub.types import DegreeHistogram, Kind


@register_mechanism("record_dp_graph_histogram", input_kind=Kind.GRAPH,
                    output_kind=Kind.DEGREE_HISTOGRAM, privacy=RECORD_DP)
def record_dp_graph_histogram(graph, *, epsilon, rng, ledger=None):
    counts = graph.degree_histogram().counts
    return DegreeHistogram(laplace_mechanism(counts, sensitivity=2, epsilon=epsilon, rng=rng,
                                             ledger=ledger))
'''


def test_add_of_a_mechanism_that_fits_no_task_stops_before_any_trial_saying_why(
        tmp_path, capsys):
    """It ran all 84 trials, then said "fits none of the tasks" without a reason. Now
    nothing runs and each reason is one line naming the tasks it holds for."""
    plugin = tmp_path / "outside" / "record_dp_graph.py"
    plugin.parent.mkdir()
    plugin.write_text(RECORD_DP_GRAPH_PLUGIN)
    results = tmp_path / "results"
    code = main(["leaderboard", "--scale", "smoke", "--no-audit", "--plugins", str(plugin),
                 "--add", "record_dp_graph_histogram", "--results-dir", str(results)],
                out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    name = "record_dp_graph_histogram"
    assert f"privpub leaderboard: --add {name}: it does not fit any of the 6 tasks:" in err
    assert (f"  {name} takes graph; private_tree, table_release take table; "
            "sparse_anonymization takes binary_matrix") in err
    assert (f"  {name} outputs degree_histogram; dp_synthetic_graph ranks joint_degree, graph; "
            "private_topk ranks ranking") in err
    assert f"  {name} claims record-DP; node_dp_degree ranks node-DP, none" in err
    assert not results.exists()  # nothing ran
    code = main(["leaderboard", "node_dp_degree", "--scale", "smoke", "--plugins", str(plugin),
                 "--add", name, "--results-dir", str(results)], out=io.StringIO())
    assert code == 2 and not results.exists()
    assert capsys.readouterr().err.splitlines() == [
        f"privpub leaderboard: --add {name}: it does not fit task node_dp_degree:",
        f"  {name} claims record-DP; node_dp_degree ranks node-DP, none"]


def test_add_of_a_mechanism_that_fits_some_tasks_says_which_it_joins():
    tasks = [load_task(n) for n in task_names()]
    fits, lines = leaderboard.check_added(tasks, ["randomized_response_node"])
    assert fits["sparse_anonymization"] == ["randomized_response_node"]
    assert not any(v for k, v in fits.items() if k != "sparse_anonymization")
    assert lines == [
        "--add randomized_response_node: joins sparse_anonymization; not the other 5 task(s):",
        "  randomized_response_node takes binary_matrix; dp_synthetic_graph, node_dp_degree, "
        "private_topk take graph; private_tree, table_release take table"]
    with pytest.raises(ConfigError) as caught:  # its registration says why it is not ranked
        leaderboard.check_added([load_task("node_dp_degree")], ["theta_cumulative_oracle"])
    assert str(caught.value).splitlines() == [
        "--add theta_cumulative_oracle: it does not fit task node_dp_degree:",
        "  theta_cumulative_oracle is not ranked: "
        f"{mechanisms()['theta_cumulative_oracle'].unranked}"]


def test_a_leaderboards_missing_data_stops_it_before_any_trial_naming_each_file_once(tmp_path):
    """Every selected task's specs and data files are checked before the first runs."""
    from privpub.errors import DataError

    empty = tmp_path / "no_data"
    empty.mkdir()
    with pytest.raises(DataError) as caught:
        leaderboard.run_leaderboard(["node_dp_degree", "private_topk"], scale="small",
                                    data_dir=str(empty), results_dir=tmp_path / "results",
                                    audit=False, echo=lambda line: None)
    text = str(caught.value)
    assert text.startswith("none of the 2 tasks can run:\n  node_dp_degree: needs ")
    assert "\n  private_topk: needs " in text and text.count("To fix:") == 1
    missing = [line for line in text.splitlines() if "[MISSING]" in line]
    assert len(missing) == len(set(missing)) > 0  # each file once
    assert not (tmp_path / "results").exists()


def test_unknown_task_is_one_line():
    with pytest.raises(ConfigError, match="unknown task 'node_dp'.*did you mean"):
        load_task("node_dp")


def test_leaderboard_reuses_a_paper_experiments_cells_and_ranks_a_plugin(
        tiny_tasks, plugin_module, tmp_path):
    """The paper experiment's cells are copied (same cell, seed, repetition, code), the
    plug-in joins by name, the pages and the CSV are written, the claim is judged."""
    results = tmp_path / "results"
    with open(leaderboard.Path(__file__).parents[2] / "conf/experiment/qardaji2012_fig4.yaml",
              encoding="utf-8") as fh:
        fig4 = yaml.safe_load(fh)
    spec = resolve_experiment(fig4, scale="smoke")
    run_experiment(spec, results_dir=results, progress=False)
    out = io.StringIO()
    code = main(["leaderboard", "--scale", "smoke", "--plugins", plugin_module, "--no-audit",
                 "--add", "outside_laplace_sequence", "--results-dir", str(results)], out=out)
    text = out.getvalue()
    assert code == 0, text
    assert "audit (quick)" not in text and not (results / "audit").exists()
    # RPS and Hay et al. at the default degree bound, both epsilons, 2 reps: from Fig. 4
    assert "(12 from other experiments)" in text, text
    frame = ResultStore(store_dir(results, STORE_PREFIX + "tiny_sequences", "smoke")
                        / "store").load()
    assert "outside_laplace_sequence" in set(frame["mechanism"])
    board = results / "leaderboard"
    assert (board / "index.html").is_file() and (board / "tiny_sequences.html").is_file()
    csv = pd.read_csv(board / "leaderboard.csv")
    assert list(csv.columns[:9]) == ["task", "notion", "dataset", "parameter", "value",
                                     "setting", "mechanism", "tuned_in_hindsight", "metric"]
    assert "outside_laplace_sequence" in set(csv["mechanism"])
    assert "claim rps_best:" in text and "leaderboard: " in text
    # the claim says which series it judged: the node-DP ones the task ranks, plug-in included
    subject = ("rps_degree_sequence best among hay_degree_sequence, outside_laplace_sequence, "
               "rps_degree_sequence on ks")
    assert f"({subject}) - " in text
    page = (board / "tiny_sequences.html").read_text()
    assert f"<b>{subject}</b>: " in page
    assert "not audited" in page and "<svg" in page
    # --no-audit: each node-DP series is ranked and says "not audited" beside its rank
    plugin = csv[csv["mechanism"] == "outside_laplace_sequence"]
    assert set(plugin["standing"]) == {"not audited"} and plugin["rank"].notna().all()
    assert re.search(r"outside_laplace_sequence <span class=unaudited>not audited</span>", page)
    top = next(line for line in text.splitlines() if line.startswith("  [node-DP]"))
    assert top.count("(not audited)") == 3, top
    assert "smoke scale: toy data" in text and "toy data" in (board / "index.html").read_text()


SLEEPY = '''
import time

from privpub.registry import NODE_DP, register_mechanism
from privpub.types import Kind


@register_mechanism("sleepy_sequence", input_kind=Kind.GRAPH,
                    output_kind=Kind.DEGREE_SEQUENCE, privacy=NODE_DP, paper=None)
def sleepy_sequence(graph, *, epsilon, rng, ledger=None):
    """Never returns."""
    while True:
        time.sleep(60)
'''


def test_a_plugin_that_never_returns_costs_its_trials_not_the_leaderboard(
        tiny_tasks, tmp_path):
    """Each of its trials stops at trial_timeout (a key=value, as run.py's) and is listed
    as failed (exit 1); the others are ranked and the claim judged without it; the page
    says why it is not ranked."""
    path = tmp_path / "elsewhere" / "sleepy_plugin.py"
    path.parent.mkdir()
    path.write_text(SLEEPY)
    results = tmp_path / "results"
    out = io.StringIO()
    try:
        code = main(["leaderboard", "--scale", "smoke", "--plugins", str(path), "--no-audit",
                     "--add", "sleepy_sequence", "--results-dir", str(results), "--n-jobs",
                     "2", "trial_timeout=5"], out=out)
    finally:
        registry._MECHANISMS.pop("sleepy_sequence", None)
    text = out.getvalue()
    assert code == 1, text
    failed = [line for line in text.splitlines() if "FAILED" in line]
    assert len(failed) == 4 and all("sleepy_sequence" in line and
                                    "exceeded trial_timeout=5 s" in line for line in failed)
    assert "claim rps_best: " in text and "not evaluated" not in text, text
    assert not any("sleepy_sequence" in line for line in text.splitlines()
                   if line.startswith("  ["))
    csv = pd.read_csv(results / "leaderboard" / "leaderboard.csv")
    assert "sleepy_sequence" not in set(csv["mechanism"]) and csv["rank"].notna().all()
    page = re.sub(r"<[^>]+>", "", (results / "leaderboard" / "tiny_sequences.html").read_text())
    assert ("sleepy_sequence: no trial succeeded (first failure: exceeded trial_timeout=5 s)"
            in page)


def test_leaderboard_limits_default_by_scale_and_are_checked():
    from privpub.experiments.executors import trial_limits
    from privpub.experiments.leaderboard import TRIAL_MEMORY, TRIAL_TIMEOUT

    assert set(TRIAL_TIMEOUT) == set(TRIAL_MEMORY) == {"smoke", "small", "paper", "large"}
    assert trial_limits(None, None, default_timeout=TRIAL_TIMEOUT["smoke"],
                        default_memory=TRIAL_MEMORY["smoke"]) == (300.0, TRIAL_MEMORY["smoke"])
    assert trial_limits(float("inf"), 10, default_timeout=1, default_memory=1) == (None, 10.0)
    for bad in (0, -1, True, "1"):
        with pytest.raises(ConfigError, match="trial_timeout must be a positive number"):
            trial_limits(bad, None, default_timeout=1, default_memory=1)
    code = main(["leaderboard", "node_dp_degree", "--scale", "smoke", "trial_memory=0"],
                out=io.StringIO())
    assert code == 2


def test_task_file_errors_are_config_errors(tmp_path, monkeypatch):
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "bad.yaml").write_text(textwrap.dedent("""
        name: bad
        input_kind: graph
        output_kinds: [degree_histogram, degree_sequence]
        notions: [node-DP]
        metric: ks_sampled
        datasets: [karate]
        grid: {epsilon: [1]}
    """))
    monkeypatch.setattr(leaderboard, "TASK_DIR", folder)
    with pytest.raises(ConfigError, match="must take every output kind"):
        load_task("bad")


_ACROSS_TASK = """
    name: across
    input_kind: graph
    output_kinds: [joint_degree, graph]
    notions: [edge-DP, none]
    metric: dk2_distance
    secondary: [assortativity_error, average_path_length_error]
    datasets: [karate]
    grid: {epsilon: [1]}
"""


@pytest.mark.parametrize("across, error", [
    ("{over: [dk2_distance, assortativity_error, average_path_length_error], title: three, "
     "source: a test}", None),
    ("{over: [dk2_distance, jaccard]}", "jaccard, not among the task's metrics"),
    ("{over: [dk2_distance]}", "two or more distinct metrics"),
    ("{over: [dk2_distance, dk2_distance]}", "two or more distinct metrics"),
    ("{metrics: [dk2_distance, assortativity_error]}", "across_metrics maps over"),
])
def test_across_metrics_key_is_checked(tmp_path, monkeypatch, across, error):
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "across.yaml").write_text(textwrap.dedent(_ACROSS_TASK)
                                        + f"across_metrics: {across}\n")
    monkeypatch.setattr(leaderboard, "TASK_DIR", folder)
    if error:
        with pytest.raises(ConfigError, match=re.escape(error)):
            load_task("across")
        return
    task = load_task("across")
    assert task.across_metrics == {"title": "three", "source": "a test", "over": [
        "dk2_distance", "assortativity_error", "average_path_length_error"]}
    assert leaderboard.board_of(task, "smoke")["across_metrics"] == task.across_metrics
    (folder / "across.yaml").write_text(textwrap.dedent(_ACROSS_TASK))
    assert load_task("across").across_metrics is None


def test_dp_synthetic_graph_is_in_pgbs_setting():
    task = load_task("dp_synthetic_graph")
    paper = task.scaled("paper")
    assert [d["name"] for d in paper["datasets"]] == [
        "road_minnesota", "facebook", "wiki_vote", "ca_hepph", "p2p_gnutella25",
        "econ_poli_large", "pgb_er", "pgb_ba"]
    assert [d for d in paper["datasets"] if len(d) > 1] == [{"name": "ca_hepph",
                                                             "loop_nodes": True}]
    assert paper["grid"] == {"epsilon": [0.1, 0.5, 1, 2, 5, 10]}
    assert paper["repetitions"] == 10  # PGB's exp_num
    assert task.metric == "dk2_distance" and task.across_metrics["over"] == task.secondary


def test_dp_synthetic_graph_ranks_pgbs_fifteen_queries_across_in_q_order():
    queries = pytest.importorskip("privpub.metrics.pgb_queries",
                                  reason="PGB's queries are not registered yet")
    task = load_task("dp_synthetic_graph")
    assert task.secondary == list(queries.PGB_QUERIES) == task.across_metrics["over"]
    assert len(task.secondary) == 15


def test_unknown_add_name_exits_2_before_running(tmp_path, capsys):
    code = main(["leaderboard", "--scale", "smoke", "--add", "outside_laplace_sequenc",
                 "--results-dir", str(tmp_path)], out=io.StringIO())
    assert code == 2
    assert "unknown mechanism" in capsys.readouterr().err
    assert not any(tmp_path.glob(f"{STORE_PREFIX}*"))


def test_a_plugin_the_quick_audit_refutes_is_set_aside_not_ranked(
        tiny_tasks, plugin_module, tmp_path):
    """The leaderboard quick-audits what it ranks and has no stored audit: the plug-in's
    sorted degree sequence has one entry per node, so its length tells a node's presence
    (no epsilon covers that): refuted, caveat-free, so an ERROR line and exit 1. It is in
    no ranking table, CSV rank or top three, and in the refuted table with its bound,
    witness and replay command; the others (at the degree bound n - 1, which the audit
    does not refute) are ranked without it."""
    task = {**TINY_TASK, "mechanisms": {
        m: {"params": {"degree_bound": "n_minus_1"}}
        for m in ("hay_degree_sequence", "rps_degree_sequence")}}
    (tiny_tasks / "tiny_sequences.yaml").write_text(yaml.safe_dump(task))
    results = tmp_path / "results"
    out = io.StringIO()
    code = main(["leaderboard", "--scale", "smoke", "--plugins", plugin_module,
                 "--add", "outside_laplace_sequence", "--results-dir", str(results)], out=out)
    text = out.getvalue()
    assert code == 1, text
    assert "audit (quick) of what is ranked and has no stored audit: hay_degree_sequence, " \
           "outside_laplace_sequence, rps_degree_sequence" in text
    verdicts = json.loads((results / "audit" / "verdicts.json").read_text())
    mine = next(r for r in verdicts if r["mechanism"] == "outside_laplace_sequence")
    assert mine["verdict"] == "violated" and mine["mode"] == "quick" and not mine["caveat"]
    witness, bound = mine["witness_id"], mine["epsilon_lower_bound"]
    assert bound > 1 and witness
    top = [line for line in text.splitlines() if line.startswith("  [")]
    assert top and not any("outside_laplace_sequence" in line for line in top), top
    assert (f"ERROR tiny_sequences: outside_laplace_sequence claims node-DP without a caveat "
            f"and the audit refutes it (eps_lb {bound:.3g} > 1); replay: privpub audit "
            f"--replay {witness} --results-dir {results}") in text
    board = results / "leaderboard"
    csv = pd.read_csv(board / "leaderboard.csv")
    plugin = csv[csv["mechanism"] == "outside_laplace_sequence"]
    assert len(plugin) and set(plugin["standing"]) == {"refuted"}
    assert plugin["rank"].isna().all() and set(plugin["witness_id"]) == {witness}
    ranked = csv[csv["mechanism"] != "outside_laplace_sequence"]
    assert ranked["rank"].notna().all() and set(ranked["standing"]) == {"ranked"}
    node = ranked[ranked["notion"] == "node-DP"]
    assert set(node["audit"]) == {"inconclusive"}  # the degree bound n - 1
    assert node.groupby(["dataset", "value", "metric"])["rank"].max().eq(2).all()
    assert "claim rps_best:" in text  # judged between the two ranked series
    page = (board / "tiny_sequences.html").read_text()
    refuted, _, ranked_part = page.partition("<h2><span class=notion>")
    assert "claims node-DP, refuted by the audit" in refuted
    shown = re.sub(r"<[^>]+>", "", refuted)  # the text a reader sees (and copies)
    assert f"privpub audit --replay {witness} --results-dir {results}" in shown
    assert f"{bound:.3g}" in refuted
    notions = ranked_part.split("<h2>Methods</h2>")[0]
    tables = re.findall(r"<table>.*?</table>|<svg.*?</svg>", notions, flags=re.S)
    assert len(tables) >= 3 and not any("outside_laplace_sequence" in t for t in tables)
    assert "Set aside, not ranked: 1 series whose claim the audit refutes " \
           "(outside_laplace_sequence" in notions
    index = (board / "index.html").read_text()
    assert "claims node-DP, refuted by the audit" in index and witness in index


def test_a_results_dir_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    code = main(["leaderboard", "node_dp_degree", "--scale", "smoke", "--results-dir",
                 str(tmp_path / "file")], out=io.StringIO())
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"privpub leaderboard: results_dir {str(tmp_path / 'file')!r} "
                                 "is a file, not a directory; pass results_dir=<a writable "
                                 "directory>"]


def test_the_large_scale_runs_only_the_tasks_with_a_block_and_skips_saying_why(
        tmp_path, monkeypatch):
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "big.yaml").write_text(textwrap.dedent("""
        name: big
        input_kind: graph
        output_kinds: [degree_histogram, degree_sequence]
        notions: [node-DP]
        metric: l1
        datasets: [karate]
        grid: {epsilon: [1]}
        scales:
          large:
            datasets: [livejournal_like]
            skip: {flowgraph: "cubic: 10 s at 1M edges, about 6 h at 35M"}
    """))
    (folder / "small_only.yaml").write_text(textwrap.dedent("""
        name: small_only
        input_kind: graph
        output_kinds: [degree_histogram]
        notions: [node-DP]
        metric: l1
        datasets: [karate]
        grid: {epsilon: [1]}
    """))
    monkeypatch.setattr(leaderboard, "TASK_DIR", folder)
    big = load_task("big")
    ranked, left_out = qualifying(big, scale="large")
    assert "flowgraph" not in ranked and "theta_cumulative_histogram" in ranked
    assert left_out["flowgraph"] == (
        "skipped at scale=large: cubic: 10 s at 1M edges, about 6 h at 35M")
    assert "flowgraph" in qualifying(big, scale="paper")[0]
    specs = compile_task(big, "large")
    assert {c.dataset for s in specs for c in s.cells} == {"livejournal_like"}
    assert not any(c.mechanism == "flowgraph" for s in specs for c in s.cells)
    with pytest.raises(ConfigError, match="small_only have no large scale; tasks that do: big"):
        leaderboard.run_leaderboard(["small_only"], scale="large", results_dir=tmp_path / "r")
    (folder / "bad.yaml").write_text(textwrap.dedent("""
        name: bad
        input_kind: graph
        output_kinds: [degree_histogram]
        notions: [node-DP]
        metric: l1
        datasets: [karate]
        grid: {epsilon: [1]}
        scales: {large: {skip: [flowgraph]}}
    """))
    with pytest.raises(ConfigError, match="skip maps a mechanism to the reason"):
        load_task("bad")


@pytest.mark.parametrize("name, graphs", [
    ("node_dp_degree", {"livejournal_like", "orkut_like"}),
    ("private_topk", {"livejournal_like"}),
])
def test_the_graph_tasks_run_at_large_on_the_shaped_graphs(name, graphs):
    task = load_task(name)
    assert {c.dataset for s in compile_task(task, "large") for c in s.cells} == graphs
    skipped = {m: why for m, why in qualifying(task, scale="large")[1].items()
               if why.startswith("skipped at scale=large")}
    assert skipped, name
    for why in skipped.values():  # each with a measured cost and its extrapolation
        assert re.search(r"\d s CPU at", why) and "growing as" in why, why


def test_dp_synthetic_graph_runs_at_large_and_each_skip_states_its_measured_cost():
    task = load_task("dp_synthetic_graph")
    specs = compile_task(task, "large")
    cells = [c for s in specs for c in s.cells]
    assert {c.dataset for c in cells} == {"livejournal_like"}
    ranked, left_out = qualifying(task, scale="large")
    skip = task.scales["large"]["skip"]
    assert skip and set(skip) <= set(left_out)
    assert not any(c.mechanism in skip for c in cells)
    for name, why in skip.items():
        # a measured time on a fraction of the graph and the fitted exponent
        assert re.search(r"\d+(\.\d+)? s\b", why) and "fraction" in why, (name, why)
        assert re.search(r"exponent \d", why), (name, why)
    # every generator the task ranks and the scale does not skip runs there
    everyone = set(qualifying(task, scale="paper")[0])
    assert {c.mechanism for c in cells} == everyone - set(skip) == set(ranked)
    assert {"dp_dk", "ldpgen", "priv_hrg", "privgraph", "pygmalion_true_count_order",
            "tmf"} == set(skip)
