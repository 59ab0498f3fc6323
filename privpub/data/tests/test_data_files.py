"""Data directory, missing and corrupt files, downloads, malformed files, registry errors.

These tests need no real data: they build small files in ``tmp_path``.
"""

import gzip
import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from privpub.data import (
    FileSpec,
    dataset_files,
    dataset_names,
    get_dataset_spec,
    load_dataset,
    resolve_data_dir,
)
from privpub.data import files as files_mod
from privpub.data.readers import read_edge_list, read_lg, read_matrix_market
from privpub.errors import DataError, PrivpubError, UnknownNameError


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- data dir
def test_resolve_data_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVPUB_DATA_DIR", str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert resolve_data_dir() == tmp_path / "env"
    monkeypatch.delenv("PRIVPUB_DATA_DIR")
    import pooch

    assert resolve_data_dir() == Path(pooch.os_cache("privpub"))
    monkeypatch.setenv("PRIVPUB_DATA_DIR", "")
    assert resolve_data_dir() == Path(pooch.os_cache("privpub"))


# --------------------------------------------------------------------------- missing / corrupt
def test_missing_file_names_file_url_and_path(tmp_path):
    spec = get_dataset_spec("wiki_vote")
    with pytest.raises(DataError) as info:
        load_dataset("wiki_vote", data_dir=tmp_path)
    msg = str(info.value)
    assert spec.files[0].path in msg
    assert spec.files[0].url in msg
    assert str(tmp_path / spec.files[0].path) in msg
    assert "PRIVPUB_DATA_DIR" in msg and "allow_download" in msg


def test_missing_file_without_direct_download_says_so(tmp_path, monkeypatch):
    spec = FileSpec("x/y.txt", "0" * 64, "https://example.org/page", 10)
    with pytest.raises(DataError, match="no direct download"):
        files_mod.ensure_file(spec, data_dir=tmp_path, allow_download=True, dataset="demo")


def _real_copy(tmp_path, name, content: bytes):
    """Write ``content`` where dataset ``name``'s (only) file is expected."""
    spec = get_dataset_spec(name).files[0]
    target = tmp_path / spec.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return spec, target


def test_corrupt_file_reports_hash_mismatch(tmp_path):
    content = b"0 1\n1 2\n"
    spec, _ = _real_copy(tmp_path, "facebook", gzip.compress(content))
    with pytest.raises(DataError, match="corrupt") as info:
        load_dataset("facebook", data_dir=tmp_path)
    msg = str(info.value)
    assert spec.sha256 in msg
    assert _sha(gzip.compress(content)) in msg
    assert spec.content_sha256 in msg and _sha(content) in msg


def test_a_gzip_with_flipped_bytes_is_reported_corrupt_not_raised(tmp_path):
    """Bytes flipped inside the deflate stream (size unchanged) raise zlib.error when read:
    the check reports the file as corrupt."""
    content = b"".join(b"%d %d\n" % (i, i * 7 % 1000) for i in range(20000))
    packed = bytearray(gzip.compress(content))
    for i in range(2000, 2100):
        packed[i] ^= 0xFF
    spec, target = _real_copy(tmp_path, "facebook", bytes(packed))
    mismatch = files_mod.check_hash(target, spec)
    assert mismatch is not None and "unreadable as gzip" in mismatch.content_actual
    with pytest.raises(DataError, match="corrupt"):
        load_dataset("facebook", data_dir=tmp_path)


def test_hash_checked_once_per_file_version(tmp_path, monkeypatch):
    data = b"1 2\n2 3\n"
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    spec = FileSpec("f.txt", _sha(data), "https://example.org/f.txt", len(data))
    calls = []
    real = files_mod.sha256_of
    monkeypatch.setattr(files_mod, "sha256_of", lambda p, **kw: calls.append(p) or real(p, **kw))
    files_mod.clear_hash_cache()
    for _ in range(3):
        assert files_mod.ensure_file(spec, data_dir=tmp_path) == path
    assert len(calls) == 1
    path.write_bytes(b"1 2\n2 4\n")  # same size, new mtime: checked again, and now corrupt
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    with pytest.raises(DataError, match="corrupt"):
        files_mod.ensure_file(spec, data_dir=tmp_path)


def test_regzipped_file_with_same_content_is_accepted(tmp_path):
    content = b"0 1\n"
    stored = gzip.compress(content, mtime=0)
    regz = gzip.compress(content, compresslevel=1, mtime=123)
    assert stored != regz
    spec = FileSpec("a.txt.gz", _sha(stored), "https://example.org", len(stored),
                    content_sha256=_sha(content))
    (tmp_path / "a.txt.gz").write_bytes(regz)
    files_mod.ensure_file(spec, data_dir=tmp_path)


# --------------------------------------------------------------------------- downloads
def _fake_retrieve(payload: bytes, seen: list):
    def retrieve(url, known_hash=None, fname=None, path=None, **kw):
        seen.append((url, known_hash))
        out = Path(path) / fname
        out.write_bytes(payload)
        if known_hash and known_hash.split(":")[-1] != _sha(payload):
            raise ValueError("hash mismatch")
        return str(out)

    return retrieve


@pytest.mark.parametrize("transform", [None, "gzip", "gunzip"])
def test_download_only_when_allowed(tmp_path, monkeypatch, transform):
    import pooch

    content = b"0 1\n1 2\n"
    stored = gzip.compress(content, mtime=0) if transform == "gzip" else content
    payload = gzip.compress(content) if transform == "gunzip" else content
    spec = FileSpec("d/e.txt" + (".gz" if transform == "gzip" else ""), _sha(stored),
                    "https://example.org/page", len(stored),
                    download_url="https://example.org/e.txt", transform=transform,
                    content_sha256=_sha(content) if transform == "gzip" else None)
    seen = []
    monkeypatch.setattr(pooch, "retrieve", _fake_retrieve(payload, seen))
    with pytest.raises(DataError, match="missing"):
        files_mod.ensure_file(spec, data_dir=tmp_path)
    assert not seen
    path = files_mod.ensure_file(spec, data_dir=tmp_path, allow_download=True)
    assert path == tmp_path / spec.path and path.is_file()
    assert seen[0][0] == "https://example.org/e.txt"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".privpub")]


def test_download_with_wrong_content_fails_and_leaves_nothing(tmp_path, monkeypatch):
    import pooch

    spec = FileSpec("e.txt", _sha(b"right"), "https://example.org", 5,
                    download_url="https://example.org/e.txt", transform="gunzip")
    monkeypatch.setattr(pooch, "retrieve", _fake_retrieve(gzip.compress(b"wrong"), []))
    with pytest.raises(DataError, match="corrupt"):
        files_mod.ensure_file(spec, data_dir=tmp_path, allow_download=True)
    assert not (tmp_path / "e.txt").exists()


def test_every_real_file_has_provenance():
    for name in dataset_names():
        spec = get_dataset_spec(name)
        for f in spec.files:
            assert len(f.sha256) == 64 and int(f.sha256, 16) >= 0
            assert f.url.startswith("https://") and f.size > 0
            assert f.download_url is None or f.download_url.startswith("https://")
            assert f.source, f.path
        assert spec.licence and spec.description


# --------------------------------------------------------------------------- malformed files
@pytest.mark.parametrize(
    "text, line",
    [
        ("# c\n# c\n1\t2\n3\tx\n5\t6\n", 4),     # non-numeric field
        ("1 2\n3 4 5\n6 7\n", 2),                # too many fields
        ("1 2\n3 4\n5\n", 3),                    # too few fields
        ("1 2\r\n3 4.5\r\n", 2),                 # not an integer (CRLF file)
        ("1 2\n-3 4\n", 2),                      # negative id
        ("From\tTo\n1 2\n3 4\nx y\n", 4),        # header allowed only as the first line
    ],
)
def test_malformed_edge_list_names_file_and_line(tmp_path, text, line):
    path = tmp_path / "edges.txt"
    path.write_text(text, newline="")
    with pytest.raises(DataError, match=rf"edges\.txt, line {line}:"):
        read_edge_list(path)


def test_malformed_gzip_edge_list(tmp_path):
    path = tmp_path / "edges.jlg"  # gzip detected from the content, not the name
    path.write_bytes(gzip.compress(b"0 1\n1 2\n2 x\n"))
    with pytest.raises(DataError, match=r"edges\.jlg, line 3:"):
        read_edge_list(path)


def test_malformed_file_through_load_dataset(tmp_path, monkeypatch):
    import dataclasses

    from privpub.data import registry

    content = b"0 1\n1 2\n2 three\n"
    spec, _ = _real_copy(tmp_path, "wiki_vote", content)
    same_path = FileSpec(spec.path, _sha(content), spec.url, len(content))
    patched = dataclasses.replace(get_dataset_spec("wiki_vote"), files=(same_path,))
    monkeypatch.setitem(registry._DATASETS, "wiki_vote", patched)
    with pytest.raises(DataError, match=r"Wiki-Vote\.txt, line 3:"):
        load_dataset("wiki_vote", data_dir=tmp_path)


def test_snap_formats(tmp_path):
    # comments, CRLF, a header line without '#', tabs and spaces, non-contiguous ids
    p = tmp_path / "a.txt"
    p.write_bytes(b"# x\r\n# y\r\nFromNodeId\tToNodeId\r\n10\t30\r\n30 10\r\n30\t99\r\n7 7\r\n")
    e = read_edge_list(p)
    np.testing.assert_array_equal(e, [[10, 30], [30, 10], [30, 99], [7, 7]])
    from privpub.data import graph_from_edge_list

    g = graph_from_edge_list(e)  # 7 only has a self-loop: dropped
    assert (g.n_nodes, g.n_edges) == (3, 2)
    np.testing.assert_array_equal(g.edges(), [[0, 1], [1, 2]])
    g = graph_from_edge_list([[10**12, 5], [5, 7], [7, 10**12], [3, 3]])  # sparse ids
    np.testing.assert_array_equal(g.edges(), [[0, 1], [0, 2], [1, 2]])
    c = tmp_path / "b.csv"
    c.write_text("id_1,id_2\n0,1\n1,2\n")
    np.testing.assert_array_equal(read_edge_list(c, sep=","), [[0, 1], [1, 2]])
    assert read_edge_list(tmp_path / "b.csv", sep=",").dtype == np.int64


def test_loop_nodes_keeps_ids_seen_only_on_self_loops(tmp_path):
    # PGB's loader (utils.get_mat) keeps every id of the file: 7 and 8 become isolated
    from privpub.data.graphs import _load_edge_list

    p = tmp_path / "pgb.txt"
    p.write_text("1 1\n1 2\n2 3\n7 7\n3\t1\n8 8\n")
    g = _load_edge_list([p])
    assert (g.n_nodes, g.n_edges) == (3, 3)
    kept = _load_edge_list([p], loop_nodes=True)
    assert (kept.n_nodes, kept.n_edges) == (5, 3)
    np.testing.assert_array_equal(kept.edges(), g.edges())  # ids 1, 2, 3 keep 0, 1, 2
    np.testing.assert_array_equal(kept.degrees(), [2, 2, 2, 0, 0])
    assert _load_edge_list([p], loop_nodes=True, lcc=True).n_nodes == 3
    with pytest.raises(PrivpubError, match="option loop_nodes must be true or false"):
        _load_edge_list([p], loop_nodes="yes")


def test_lg_and_matrix_market(tmp_path):
    lg = tmp_path / "g.jlg"
    lg.write_bytes(gzip.compress(b"4,3,d,graph,2,Int64,simplegraph\n1,2\n2,3\n4,4\n"))
    n, directed, edges = read_lg(lg)
    assert (n, directed) == (4, True)
    np.testing.assert_array_equal(edges, [[0, 1], [1, 2], [3, 3]])
    lg.write_bytes(b"4,5,u,graph\n1,2\n")
    with pytest.raises(DataError, match="declares 5 edges"):
        read_lg(lg)
    lg.write_bytes(b"4,1,u,graph\n1,9\n")
    with pytest.raises(DataError, match=r"line 2: a node id is outside 1\.\.4"):
        read_lg(lg)
    lg.write_bytes(b"not a header\n1,2\n")
    with pytest.raises(DataError, match="line 1"):
        read_lg(lg)
    mm = tmp_path / "m.mtx"
    mm.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 2\n2 1\n3 2\n")
    shape, entries = read_matrix_market(mm)
    assert shape == (3, 3)
    np.testing.assert_array_equal(entries, [[1, 0], [2, 1]])
    mm.write_text("%MatrixMarket matrix coordinate real general\n3 3 2\n2 1 0.5\n3 2 0\n")
    shape, entries = read_matrix_market(mm)
    np.testing.assert_array_equal(entries, [[1, 0]])
    mm.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 x\n")
    with pytest.raises(DataError, match=r"m\.mtx, line 4:"):
        read_matrix_market(mm)


# --------------------------------------------------------------------------- registry
def test_unknown_dataset_lists_known_names():
    with pytest.raises(UnknownNameError) as info:
        load_dataset("wiki-vote")
    msg = str(info.value)
    assert "wiki_vote" in msg and "karate" in msg and "adult" in msg
    with pytest.raises(UnknownNameError):
        get_dataset_spec("nope")
    with pytest.raises(UnknownNameError):
        dataset_files("nope")


def test_unknown_option_lists_valid_options():
    with pytest.raises(PrivpubError, match=r"no option\(s\) lcc.*n_rows=1024"):
        load_dataset("sbm_epasto", rng=0, lcc=True)
    with pytest.raises(PrivpubError, match="lcc=False"):
        load_dataset("wiki_vote", largest=True)


def test_bad_option_values(tmp_path):
    with pytest.raises(PrivpubError, match="split"):
        from privpub.data.tables import _load_adult

        _load_adult((tmp_path / "a", tmp_path / "b"), split="validation")
    with pytest.raises(PrivpubError, match="attributes must be one of"):
        _load_adult((tmp_path / "a", tmp_path / "b"), attributes="qardaji")
    with pytest.raises(PrivpubError, match="including the class"):
        _load_adult((tmp_path / "a", tmp_path / "b"), attributes=["age", "sex"])
    with pytest.raises(PrivpubError, match="lcc"):
        from privpub.data.graphs import _finish

        _finish(load_dataset("karate"), "yes")


def test_names_and_kinds():
    names = dataset_names()
    assert names == sorted(names)
    for n in names:
        spec = get_dataset_spec(n)
        assert spec.name == n and n == n.lower() and n.isidentifier()
        assert spec.options == tuple(spec.defaults)
    real_graphs = {"facebook", "wiki_vote", "ca_hepph", "email_enron", "cit_hepph",
                   "loc_brightkite", "twitter", "dblp", "caltech36", "georgetown15", "unc28",
                   "as_caida", "musae_git", "web_notredame", "road_minnesota",
                   "p2p_gnutella25", "econ_poli_large", "pgb_er", "pgb_ba"}
    assert real_graphs <= set(names)
    declare_n = {"cit_hepph", "twitter", "caltech36", "georgetown15", "unc28", "web_notredame"}
    for n in real_graphs:  # an edge list may keep its self-loop-only ids (loop_nodes)
        extra = {} if n in declare_n else {"loop_nodes": False}
        assert get_dataset_spec(n).defaults == {"lcc": False, **extra}, n
