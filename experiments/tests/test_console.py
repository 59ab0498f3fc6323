"""The ``privpub`` console script (experiments/console.py), run in-process via ``main``."""

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from privpub.data import DatasetSpec, FileSpec, registry
from privpub.data import files as files_mod
from privpub.experiments import app, console
from privpub.experiments.catalog import CHECKOUT, CONF_DIR
from privpub.experiments.console import figure_of, main
from privpub.experiments.spec import resolve_experiment

CONF = CONF_DIR
EXPERIMENTS = sorted((CONF / "experiment").glob("*.yaml"))


def run(*argv):
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


# --------------------------------------------------------------------------- list
@pytest.fixture(scope="module")
def listing():
    code, text = run("list", "--json", "--results-dir", "/nonexistent-results")
    assert code == 0
    return json.loads(text)


def test_list_json_has_every_experiment_with_the_runners_trial_counts(listing):
    rows = {e["name"]: e for e in listing["experiments"]}
    assert len(EXPERIMENTS) > 1
    for path in EXPERIMENTS:
        exp = yaml.safe_load(path.read_text())
        item = rows[exp["name"]]
        assert item["paper"] == exp["paper"]
        assert item["title"] == exp.get("title", "")
        for scale in ("smoke", "small", "paper"):
            row = item["scales"][scale]
            try:
                spec = resolve_experiment(exp, scale=scale)
            except Exception as exc:  # the same error is shown on that row
                assert row["trials"] is None and type(exc).__name__ in row["error"]
                continue
            assert row["error"] is None
            assert row["trials"] == len(spec.cells) * spec.repetitions
            assert (row["cells"], row["repetitions"]) == (len(spec.cells), spec.repetitions)
            assert [d["name"] for d in row["datasets"]] == list(
                dict.fromkeys(c.dataset for c in spec.cells)
            )
            assert row["expected_seconds"] is None  # nothing measured in that results dir


def test_list_table_names_every_experiment_grouped_by_paper():
    code, text = run("list", "--results-dir", "/nonexistent-results")
    assert code == 0
    for path in EXPERIMENTS:
        exp = yaml.safe_load(path.read_text())
        assert exp["name"] in text
        assert f"\n{exp['paper']}  (" in text
    assert "experiment" in text and "trials" in text and "datasets" in text


def test_list_shows_the_large_scale_only_for_the_experiments_that_have_it(tmp_path, listing):
    assert all("large" not in e["scales"] for e in listing["experiments"])
    code, text = run("list", "--scale", "large", "--results-dir", "/nonexistent-results")
    assert code == 0 and "no experiment runs at large (`privpub leaderboard --scale large`" in text
    conf = _tiny_conf(tmp_path)
    path = conf / "experiment" / "toy2020_fig2b.yaml"
    path.write_text(path.read_text() + "  large: {repetitions: 1}\n")
    code, text = run("list", "--scale", "large", "--conf-dir", str(conf),
                     "--results-dir", str(tmp_path / "r"))
    assert code == 0 and "toy2020_fig2b" in text and "toy2020_table1" not in text
    assert "no large scale" not in text


def _tiny_conf(tmp_path: Path) -> Path:
    conf = tmp_path / "conf"
    (conf / "experiment").mkdir(parents=True)
    (conf / "experiment" / "toy2020_fig2b.yaml").write_text(
        "# @package experiment\n"
        "name: toy2020_fig2b\npaper: toy2020\ntitle: 'toy2020 Fig. 2b: a tiny SBM'\n"
        "datasets: [sbm_small]\nmechanisms: [randomized_response_edge]\n"
        "grid: {epsilon: [1, 2, 4]}\nmetrics: [jaccard]\nrepetitions: 5\n"
        "scales:\n  smoke: {grid: {epsilon: [1]}, repetitions: 2}\n"
        "  small: {datasets: [dblp_binary, sbm_small]}\n"
    )
    (conf / "experiment" / "toy2020_table1.yaml").write_text(
        "name: toy2020_table1\npaper: toy2020\ndatasets: [karate]\n"
        "mechanisms: [no_such_mechanism]\nmetrics: [jaccard]\n"
    )
    return conf


def test_list_counts_times_data_and_errors_on_a_tiny_conf(tmp_path):
    conf = _tiny_conf(tmp_path)
    results = tmp_path / "results"
    (results / "toy2020_fig2b" / "paper").mkdir(parents=True)
    (results / "toy2020_fig2b" / "paper" / "meta.json").write_text(
        json.dumps({"seconds": {"total": 9.0, "per_trial": 0.5}, "trials": 15})
    )
    code, text = run("list", "--json", "--conf-dir", str(conf), "--results-dir", str(results),
                     "--data-dir", str(tmp_path / "no-data"))
    assert code == 0
    rows = {e["name"]: e for e in json.loads(text)["experiments"]}
    fig = rows["toy2020_fig2b"]
    assert fig["figure"] == "Fig. 2b"
    s = fig["scales"]
    # 1 or 3 epsilons, plus the noise-free twin at the largest one
    assert (s["smoke"]["trials"], s["small"]["trials"], s["paper"]["trials"]) == (4, 40, 20)
    assert s["paper"]["expected_seconds"] == pytest.approx(0.5 * 20)
    assert s["small"]["expected_seconds"] is None
    assert s["smoke"]["data_ready"] and s["smoke"]["datasets"][0]["status"] == "synthetic"
    assert s["small"]["missing"] == ["dblp_binary"] and not s["small"]["data_ready"]
    table = rows["toy2020_table1"]
    assert table["figure"] == "Table 1"
    assert all("no_such_mechanism" in r["error"] for r in table["scales"].values())
    assert table["scales"]["smoke"]["datasets"][0]["name"] == "karate"  # from the YAML

    code, text = run("list", "--conf-dir", str(conf), "--results-dir", str(results),
                     "--data-dir", str(tmp_path / "no-data"), "--scale", "paper")
    assert code == 0
    assert "a tiny SBM" in text and "toy2020 Fig. 2b:" not in text  # title, no prefix
    assert "10 s" in text                     # 0.5 s per trial x 20 trials (twins included)
    assert "no_such_mechanism" in text        # the failing row says why, the listing goes on
    assert "smoke" not in text

    code, text = run("list", "--conf-dir", str(conf), "--scale", "small",
                     "--data-dir", str(tmp_path / "no-data"))
    assert "missing: dblp_binary" in text


def test_list_unknown_paper_is_a_usage_error(capsys):
    code, _ = run("list", "--paper", "nosuchpaper2000")
    assert code == 2
    assert "day2016" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, exp, figure",
    [("day2016_fig3", {}, "Fig. 3"), ("epasto2022_fig3c", {}, "Fig. 3c"),
     ("day2016_table2", {}, "Table 2"), ("default", {}, "default"),
     ("x2020_fig1", {"figure": "Fig. 1 (left)"}, "Fig. 1 (left)")],
)
def test_figure_of(name, exp, figure):
    assert figure_of(name, exp) == figure


# --------------------------------------------------------------------------- data
CONTENT = {"f/one.txt": b"0 1\n", "f/two.txt.gz": b"not really gzip"}


@pytest.fixture
def fake_registry(monkeypatch):
    """Only two fake real datasets (and karate, synthetic) are registered."""

    def spec(path, download=True):
        data = CONTENT[path]
        return FileSpec(path, hashlib.sha256(data).hexdigest(), f"https://example.org/{path}",
                        len(data), download_url=f"https://example.org/raw/{path}"
                        if download else None)

    fakes = {
        "fake_one": DatasetSpec("fake_one", "graph", "", files=(spec("f/one.txt"),),
                                loader=lambda p: p),
        "fake_two": DatasetSpec("fake_two", "table", "",
                                files=(spec("f/two.txt.gz", download=False),),
                                loader=lambda p: p),
        "karate": registry.get_dataset_spec("karate"),
    }
    monkeypatch.setattr(registry, "_DATASETS", fakes)
    files_mod.clear_hash_cache()
    return fakes


def _fill(root: Path):
    for path, data in CONTENT.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)


def test_data_reports_every_missing_file_and_exits_1(fake_registry, tmp_path):
    code, text = run("data", "--data-dir", str(tmp_path))
    assert code == 1
    for path in CONTENT:
        assert f"{path}  missing" in text or f"{path}  [MISSING]" in text
        assert str(tmp_path / path) in text
        assert f"https://example.org/{path}" in text
    assert "https://example.org/raw/f/one.txt" in text
    assert "2 file(s): 2 missing" in text
    assert "To fix:" in text
    assert "karate" not in text                # synthetic: nothing to check


def test_data_complete_dir_exits_0(fake_registry, tmp_path):
    _fill(tmp_path)
    code, text = run("data", "--data-dir", str(tmp_path))
    assert code == 0, text
    assert "2 file(s): 2 present" in text and "To fix" not in text


def test_data_corrupt_file_and_json(fake_registry, tmp_path):
    _fill(tmp_path)
    (tmp_path / "f/one.txt").write_bytes(b"tampered")
    code, text = run("data", "--data-dir", str(tmp_path), "--json")
    assert code == 1
    files = {f["path"]: f for f in json.loads(text)["files"]}
    assert files["f/one.txt"]["status"] == "corrupt"
    assert files["f/one.txt"]["actual_sha256"] == hashlib.sha256(b"tampered").hexdigest()
    assert files["f/two.txt.gz"]["status"] == "present"


def test_data_download_fetches_what_has_a_url(fake_registry, tmp_path, monkeypatch):
    import pooch

    def retrieve(url, known_hash=None, fname=None, path=None, **kw):
        out = Path(path) / fname
        out.write_bytes(CONTENT[url.split("/raw/", 1)[1]])
        return str(out)

    monkeypatch.setattr(pooch, "retrieve", retrieve)
    code, text = run("data", "--data-dir", str(tmp_path), "--download")
    assert code == 1                                   # f/two.txt.gz has no direct download
    assert (tmp_path / "f/one.txt").read_bytes() == CONTENT["f/one.txt"]
    assert "downloaded 1 file(s): f/one.txt" in text
    assert "not downloaded: f/two.txt.gz: no direct download" in text
    (tmp_path / "f/two.txt.gz").write_bytes(CONTENT["f/two.txt.gz"])
    assert run("data", "--data-dir", str(tmp_path), "--download")[0] == 0


# --------------------------------------------------------------------------- reproduce
def test_reproduce_prints_the_glob_command():
    code, text = run("reproduce", "qardaji2012", "--scale", "smoke", "--print")
    assert code == 0
    assert "-m 'experiment=glob(qardaji2012_*)' scale=smoke" in text.splitlines()[0]
    assert "qardaji2012_fig1" in text and "expected time" not in text
    code, text = run("reproduce", "all", "n_jobs=2", "--print")
    assert "-m 'experiment=glob(*,exclude=default)' scale=paper n_jobs=2" in text
    assert run("reproduce", "nosuchpaper2000")[0] == 2
    # several papers: one multirun over their experiments, in the order given
    code, text = run("reproduce", "sala2011", "day2016", "--scale", "smoke", "--print")
    assert code == 0
    assert "-m 'experiment=glob([sala2011_*,day2016_*])' scale=smoke" in text.splitlines()[0]
    listed = text.splitlines()[1]
    assert "sala2011_fig9" in listed and "day2016_fig8" in listed and "qardaji" not in listed
    assert run("reproduce", "day2016", "nosuchpaper2000", "--print")[0] == 2
    assert run("reproduce", "all", "day2016", "--print")[0] == 2


def test_reproduce_runs_the_paper_after_saying_how_long_and_what_data_is_missing(
        monkeypatch, tmp_path):
    """The README calls it the command that regenerates a paper, so it runs."""
    calls = []
    monkeypatch.setattr(app, "run", lambda argv, prog: calls.append(argv) or 0)
    code, text = run("reproduce", "day2016", f"data_dir={tmp_path}", "--scale", "small")
    assert code == 1 and not calls  # nothing runs without the data
    assert "# expected time: " in text and "from an empty store" in text
    assert "not run: data missing or corrupt: facebook" in text
    code, text = run("reproduce", "day2016", f"results_dir={tmp_path}", "--scale", "smoke")
    assert code == 0 and "# data: every file present" in text
    (cmd,) = calls  # in this process, through the function `privpub run` calls
    assert cmd == ["-m", "experiment=glob(day2016_*)", "scale=smoke", f"results_dir={tmp_path}"]


def test_reproduce_with_a_bad_override_stops_before_any_experiment_runs(tmp_path, capsys):
    """It printed the same error once per experiment of the paper; now the sweep is
    checked before its first job and the error is said once."""
    code, text = run("reproduce", "qardaji2012", "--scale", "smoke", "+mechanism.thetaa=3",
                     f"results_dir={tmp_path}", "progress=false")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith("privpub: error: none of the 5 jobs can run:\n")
    assert "  #0 (experiment=qardaji2012_fig1), #1 (experiment=qardaji2012_fig2): no selected " \
           "mechanism takes thetaa" in err
    assert not any(p.name.startswith("qardaji2012") for p in tmp_path.iterdir())


def test_expected_time_comes_from_the_timing_table():
    assert console.expected_time("day2016", "paper").startswith("20.4 min from an empty store")
    assert "not measured" in console.expected_time("day2016", "smoke")
    from privpub.papers import SEED_PAPERS

    assert SEED_PAPERS == ("qardaji2012", "epasto2022", "day2016", "sala2011", "farias2021")
    five = console.expected_time(list(reversed(SEED_PAPERS)), "smoke")
    assert five.startswith("1.2 min from an empty store")  # the row "all five"
    assert "no row for day2016 + sala2011" in console.expected_time(["day2016", "sala2011"],
                                                                    "paper")


def test_reproduce_glob_expands_to_the_papers_experiments():
    """Hydra 1.3's sweep parser turns the printed override into one job per experiment file."""
    from hydra import initialize_config_dir

    from privpub.experiments.hydra_support import sweep_jobs

    def jobs(paper):
        cmd = console.reproduce_command(paper, "smoke")
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            batch = sweep_jobs(cmd[3:])
        return sorted(j[0].split("=", 1)[1] for j in batch)

    stems = sorted(p.stem for p in EXPERIMENTS)
    assert jobs("qardaji2012") == [s for s in stems if s.startswith("qardaji2012_")]
    assert jobs("all") == [s for s in stems if s != "default"]
    assert jobs(["sala2011", "qardaji2012"]) == [
        s for s in stems if s.startswith(("sala2011_", "qardaji2012_"))]


# --------------------------------------------------------------------------- speed
def test_help_imports_nothing_heavy():
    code = (
        "import sys, io; from privpub.experiments.console import main\n"
        "out = io.StringIO(); assert main(['--help'], out=out) == 0\n"
        "assert 'reproduce' in out.getvalue()\n"
        "print(sorted(m for m in ('pandas', 'numba', 'matplotlib', 'scipy', 'privpub.data') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=CHECKOUT)
    assert out.stdout.strip() == "[]"


def test_usage_errors_exit_2(capsys):
    assert run("list", "--scale", "huge")[0] == 2
    assert "invalid choice" in capsys.readouterr().err
    assert run()[0] == 2  # no subcommand: the help, exit 2


# --------------------------------------------------------------------------- key=value
def parsed(*argv):
    parser, commands = console._parser()
    return console.parse_args(parser, commands, list(argv))


def test_every_subcommand_takes_its_config_keys_in_any_order_with_its_flags():
    a = parsed("reproduce", "day2016", "n_jobs=2", "--scale", "small")
    assert (a.papers, a.scale, a.overrides) == (["day2016"], "small", ["n_jobs=2"])
    a = parsed("reproduce", "day2016", "scale=smoke", "--print", "experiment.grid.epsilon=[1]")
    assert (a.scale, a.print_only, a.overrides) == ("smoke", True,
                                                    ["experiment.grid.epsilon=[1]"])
    a = parsed("audit", "--quick", "results_dir=/tmp/x", "laplace_histogram", "n_jobs=2",
               "rerun=true", "plugins=[a.b,c]", "executor=sequential", "seed=3")
    assert (a.quick, a.results_dir, a.names, a.n_jobs, a.rerun, a.plugins, a.executor,
            a.seed) == (True, "/tmp/x", ["laplace_histogram"], 2, True, ["a.b", "c"],
                        "sequential", 3)
    a = parsed("leaderboard", "scale=smoke", "results_dir=/tmp/x", "add_mechanisms=[m]",
               "--seed", "4", "data_dir=/d")
    assert (a.scale, a.results_dir, a.add, a.seed, a.data_dir) == ("smoke", "/tmp/x", ["m"],
                                                                   4, "/d")
    a = parsed("list", "results_dir=/tmp/x", "--paper", "day2016", "scale=paper")
    assert (a.results_dir, a.paper, a.scale) == ("/tmp/x", "day2016", "paper")
    assert parsed("show", "ldrc", "data_dir=/d").data_dir == "/d"
    assert parsed("data", "allow_download=true").download is True
    a, b = parsed("audit"), parsed("leaderboard", "--scale", "smoke", "scale=smoke")
    assert (a.n_jobs, a.results_dir, a.rerun, a.plugins, b.scale) == (1, "results", False, [],
                                                                      "smoke")


@pytest.mark.parametrize("argv, message", [
    (["list", "--scale", "smoke", "scale=small"],
     "--scale smoke and scale=small say different things"),
    (["audit", "n_jobs=2", "--n-jobs", "3"], "--n-jobs 3 and n_jobs=2 say different things"),
    (["list", "sed=1"], "unknown config key 'sed' (did you mean 'seed'?)"),
    (["list", "n_jobs=2"], "n_jobs= does not apply here; it takes scale=, results_dir="),
    (["audit", "rerun=maybe"], "rerun=maybe: must be true or false"),
    (["leaderboard", "seed=0,1"], "seed=0,1 is not one value (sweeps: privpub run -m)"),
    (["list", "scale=small", "scale=paper"], "scale= is given twice, differently"),
])
def test_a_key_that_contradicts_its_flag_or_is_unknown_is_one_line(capsys, argv, message):
    assert run(*argv)[0] == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1

@pytest.mark.parametrize("argv, message", [
    (["run", "task_timeout=60"], "privpub: error: task_timeout= is now trial_timeout="),
    (["run", "-m", "+task_memory=100,200"], "privpub: error: task_memory= is now trial_memory="),
    (["audit", "--quick", "task_timeout=60"],
     "privpub audit: task_timeout= is now trial_timeout="),
    (["audit", "--task-timeout", "60"], "privpub audit: --task-timeout is now --trial-timeout"),
    (["audit", "--task-memory=100"], "privpub audit: --task-memory is now --trial-memory"),
    (["reproduce", "qardaji2012", "task_memory=100"],
     "privpub reproduce: task_memory= is now trial_memory="),
])
def test_the_old_names_of_the_trial_limits_are_one_line_naming_the_new(capsys, tmp_path,
                                                                        argv, message):
    """A run's unit is a trial (a leaderboard problem is a task): task_timeout= and
    task_memory= (and the audit's --task-* flags) stop before any work, exit 2."""
    assert run(*argv, f"results_dir={tmp_path}")[0] == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and len(err.splitlines()) == 1, err
    assert not any(tmp_path.iterdir())



def test_privpub_run_is_the_run_py_command_in_this_process(tmp_path, capsys):
    args = ["run", "scale=smoke", f"results_dir={tmp_path}", "progress=false"]
    code, text = run(*args)
    assert code == 0 and "privpub: claims: 2 held" in text
    assert (tmp_path / "default" / "smoke" / "store").is_dir()
    assert run("run", "experiment=nosuch", f"results_dir={tmp_path}")[0] == 2  # Hydra's error
    assert run("run", "+sed=1", f"results_dir={tmp_path}")[0] == 2
    assert "unknown config key 'sed'" in capsys.readouterr().err
    code, text = run(*args)  # a second run in the process: all stored
    assert code == 0 and "0 trial(s) ran, 12 already stored" in text
