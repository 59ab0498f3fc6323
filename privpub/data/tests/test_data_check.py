"""check_dataset_files / file_status: every missing or corrupt file named in one error.

Fake datasets are added to the registry with ``monkeypatch.setitem`` (undone after each
test); their files are built in ``tmp_path``. No real data, no network.
"""

import hashlib
from pathlib import Path

import pytest

from privpub.data import (
    DatasetSpec,
    FileSpec,
    check_dataset_files,
    file_status,
    get_dataset_spec,
    registry,
)
from privpub.data import files as files_mod
from privpub.errors import DataError


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


CONTENT = {"g/a.txt": b"0 1\n1 2\n", "g/b.txt": b"2 3\n", "h/shared.txt": b"x,y\n"}


def _file(path, download=True):
    data = CONTENT[path]
    return FileSpec(
        path, _sha(data), f"https://example.org/official/{path}", len(data),
        download_url=f"https://example.org/raw/{path}" if download else None,
    )


@pytest.fixture
def fakes(monkeypatch):
    """Two fake real datasets (one with two files, one sharing a file) and a synthetic one."""

    def loader(paths, **kw):
        return paths

    specs = [
        DatasetSpec("fake_two", "graph", "two files", files=(_file("g/a.txt"),
                                                            _file("g/b.txt", download=False),
                                                            _file("h/shared.txt")),
                    loader=loader),
        DatasetSpec("fake_shared", "graph", "shares a file", files=(_file("h/shared.txt"),),
                    loader=loader),
    ]
    for s in specs:
        monkeypatch.setitem(registry._DATASETS, s.name, s)
    files_mod.clear_hash_cache()
    return specs


def _write(root: Path, path: str, data: bytes | None = None):
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(CONTENT[path] if data is None else data)
    return target


def test_two_missing_files_named_in_one_error(fakes, tmp_path):
    _write(tmp_path, "h/shared.txt")
    with pytest.raises(DataError) as info:
        check_dataset_files(["fake_two", "fake_shared"], data_dir=tmp_path)
    msg = str(info.value)
    for path in ("g/a.txt", "g/b.txt"):
        assert path in msg
        assert str(tmp_path / path) in msg
        assert f"https://example.org/official/{path}" in msg
    assert "https://example.org/raw/g/a.txt" in msg          # direct download when known
    assert "direct download: none" in msg                     # b.txt has none
    assert "h/shared.txt" not in msg.split("To fix:")[0]      # present files are not listed
    assert msg.count("To fix:") == 1
    fix = msg.split("To fix:")[1]
    assert "PRIVPUB_DATA_DIR" in fix and "data_dir=" in fix
    assert "allow_download" in fix and "g/a.txt" in fix       # the fetchable one
    assert "privpub data --download" in fix
    assert msg.startswith("2 missing data file(s) for dataset(s) fake_two")


def test_corrupt_file_shows_both_hashes(fakes, tmp_path):
    for p in CONTENT:
        _write(tmp_path, p)
    _write(tmp_path, "g/b.txt", b"tampered\n")
    with pytest.raises(DataError) as info:
        check_dataset_files(["fake_two"], data_dir=tmp_path)
    msg = str(info.value)
    assert "CORRUPT" in msg and "g/b.txt" in msg and "g/a.txt" not in msg.split("To fix:")[0]
    assert _sha(CONTENT["g/b.txt"]) in msg            # expected
    assert _sha(b"tampered\n") in msg                 # actual
    assert "1 corrupt" in msg


def test_missing_and_corrupt_together(fakes, tmp_path):
    _write(tmp_path, "g/a.txt", b"bad")
    with pytest.raises(DataError) as info:
        check_dataset_files(["fake_two", "fake_shared"], data_dir=tmp_path)
    msg = str(info.value)
    assert msg.startswith("2 missing and 1 corrupt data file(s)")
    assert "datasets fake_shared, fake_two" in msg     # a shared file names both datasets
    assert msg.count("h/shared.txt  [MISSING]") == 1   # and is listed once


def test_complete_dir_passes(fakes, tmp_path):
    for p in CONTENT:
        _write(tmp_path, p)
    check_dataset_files(["fake_two", "fake_shared"], data_dir=tmp_path)


def test_synthetic_datasets_are_never_checked(fakes, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(registry, "check_hash", lambda *a: calls.append(a))
    names = ["karate", "sbm_small", "gaussian_1d"]
    assert all(get_dataset_spec(n).synthetic for n in names)
    check_dataset_files(names, data_dir=tmp_path / "does-not-exist")
    assert file_status(names, data_dir=tmp_path) == []
    assert not calls
    with pytest.raises(DataError) as info:  # mixed: only the real one is reported
        check_dataset_files([*names, "fake_shared"], data_dir=tmp_path)
    assert "fake_shared" in str(info.value) and "karate" not in str(info.value)


def test_file_status(fakes, tmp_path):
    _write(tmp_path, "g/a.txt")
    _write(tmp_path, "g/b.txt", b"tampered\n")
    st = {s.path: s for s in file_status(["fake_two", "fake_shared", "karate"],
                                         data_dir=tmp_path)}
    assert list(st) == ["g/a.txt", "g/b.txt", "h/shared.txt"]
    assert [s.status for s in st.values()] == ["present", "corrupt", "missing"]
    assert st["h/shared.txt"].datasets == ("fake_shared", "fake_two")
    assert st["h/shared.txt"].expected_path == tmp_path / "h/shared.txt"
    assert st["g/b.txt"].mismatch.actual == _sha(b"tampered\n")
    assert st["g/b.txt"].to_dict()["expected_sha256"] == _sha(CONTENT["g/b.txt"])
    assert st["g/b.txt"].download_url is None and st["g/a.txt"].size == len(CONTENT["g/a.txt"])
    every = file_status(data_dir=tmp_path)  # default: every registered dataset
    assert {"g/a.txt", "h/shared.txt"} <= {s.path for s in every}


def test_download_fetches_what_it_can_and_reports_the_rest(fakes, tmp_path, monkeypatch):
    import pooch

    seen = []

    def retrieve(url, known_hash=None, fname=None, path=None, **kw):
        seen.append(url)
        rel = url.split("/raw/", 1)[1]
        out = Path(path) / fname
        out.write_bytes(CONTENT[rel])
        return str(out)

    monkeypatch.setattr(pooch, "retrieve", retrieve)
    with pytest.raises(DataError) as info:
        check_dataset_files(["fake_two", "fake_shared"], data_dir=tmp_path)
    assert not seen                                   # nothing fetched unless allowed
    with pytest.raises(DataError) as info:
        check_dataset_files(["fake_two", "fake_shared"], data_dir=tmp_path, allow_download=True)
    assert sorted(seen) == ["https://example.org/raw/g/a.txt", "https://example.org/raw/h/shared.txt"]
    msg = str(info.value)
    assert msg.startswith("1 missing") and "g/b.txt" in msg   # no direct URL: still missing
    assert (tmp_path / "g/a.txt").read_bytes() == CONTENT["g/a.txt"]
    _write(tmp_path, "g/b.txt")
    check_dataset_files(["fake_two", "fake_shared"], data_dir=tmp_path, allow_download=True)
