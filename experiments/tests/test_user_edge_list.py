"""A user's own edge list as a dataset: ``load_dataset(<path>)``, ``dataset=<path>`` on the
command line, its cells keyed by the file's path and content, and its errors (exit 2)."""

import gzip
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_dir

from privpub.data import load_dataset
from privpub.data.graphs import _load_edge_list_in_memory
from privpub.errors import ConfigError, DataError
from privpub.experiments import app
from privpub.experiments.cli import spec_from_config
from privpub.experiments.hydra_support import file_datasets, register_configs

CONF = Path(__file__).resolve().parents[2] / "conf"


def _write(path: Path, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    edges = rng.integers(0, 60, size=(300, 2))
    text = "# my graph\nsrc\tdst\n" + "\n".join(f"{u}\t{v}" for u, v in edges) + "\n"
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    return path


def test_load_dataset_takes_a_path(tmp_path):
    path = _write(tmp_path / "mine.txt.gz")
    g = load_dataset(str(path))
    ref = _load_edge_list_in_memory([path])
    assert g.name == "mine.txt.gz"
    np.testing.assert_array_equal(g.adjacency.indices, ref.adjacency.indices)
    np.testing.assert_array_equal(g.adjacency.indptr, ref.adjacency.indptr)
    lcc = load_dataset(path, lcc=True)
    assert lcc.n_nodes == _load_edge_list_in_memory([path], lcc=True).n_nodes
    csv = tmp_path / "w.csv"
    csv.write_text("a,b,weight\n1,2,0.5\n2,3,1\n")  # comma-separated, a third column
    with pytest.raises(DataError, match=r"w\.csv, line 2: a field is not an integer"):
        load_dataset(csv)
    csv.write_text("a,b,weight\n1,2,5\n2,3,1\n")
    assert load_dataset(csv).n_edges == 2
    with pytest.raises(DataError, match="does not exist"):
        load_dataset(str(tmp_path / "nothing.txt"))


def test_dataset_path_on_the_command_line_becomes_edge_list(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert file_datasets(["dataset=edges.txt", "seed=1"]) == [
        "dataset=edge_list", f"dataset.path={tmp_path}/edges.txt", "seed=1"]
    swept = file_datasets(["dataset=/a/x.txt.gz,/b/y.edges"])
    assert swept == ["dataset=edge_list", "dataset.path=/a/x.txt.gz,/b/y.edges"]
    assert file_datasets(["dataset=karate", "dataset.lcc=true"]) == ["dataset=karate",
                                                                      "dataset.lcc=true"]
    assert file_datasets(["dataset='/a b/x.txt'"])[1] == "dataset.path='/a b/x.txt'"
    with pytest.raises(ConfigError, match="mixes files and dataset names"):
        file_datasets(["dataset=karate,/a/x.txt"])


def _spec(path: Path):
    overrides = file_datasets(["experiment=day2016_fig3", "scale=smoke",
                               "mechanism=theta_cumulative_histogram", f"dataset={path}"])
    register_configs(overrides)  # mechanism=<name> without a YAML
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        return spec_from_config(compose(config_name="config", overrides=overrides),
                                overrides=overrides)


def test_cells_are_keyed_by_the_files_path_and_content(tmp_path):
    path = _write(tmp_path / "g.txt")
    spec = _spec(path)
    options = {c.dataset for c in spec.cells}, [c.dataset_options for c in spec.cells]
    assert options[0] == {"edge_list"}
    import hashlib

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert all(o == {"path": str(path), "sha256": digest} for o in options[1])
    assert set(spec.dataset_labels.values()) == {"g.txt"}
    before = {c.cell_id for c in spec.cells}
    _write(path, seed=1)  # new content at the same path: new cells
    assert not before & {c.cell_id for c in _spec(path).cells}
    with pytest.raises(DataError, match="changed since this experiment was set up"):
        load_dataset("edge_list", path=str(path), sha256=digest)


@pytest.mark.parametrize("problem", ["missing", "memory"])
def test_a_bad_file_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, problem):
    path = tmp_path / "g.txt"
    if problem == "memory":
        _write(path)
        from privpub.data import edge_stream

        monkeypatch.setattr(edge_stream, "available_memory", lambda: 2**20)
    code = app.run(["experiment=day2016_fig3", "scale=smoke", f"dataset={path}",
                    "mechanism=theta_cumulative_histogram", f"results_dir={tmp_path / 'r'}",
                    "progress=false", "plot=false"])
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("privpub: error:")]
    assert len(lines) == 1
    want = "does not exist" if problem == "missing" else "GiB of memory to load"
    assert want in lines[0]
