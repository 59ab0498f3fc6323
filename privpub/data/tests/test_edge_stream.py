"""The streamed edge-list loader (privpub.data.edge_stream) against the in-memory one.

Both must give the very same adjacency (indptr and indices) on any well-formed file, and
the same line number for a malformed one. No real data is needed.
"""

import gzip

import numpy as np
import pytest

from privpub.data import edge_stream
from privpub.data.edge_stream import (
    estimate_load_memory,
    graph_from_edge_file,
    read_edge_chunks,
)
from privpub.data.graphs import _load_edge_list_in_memory
from privpub.errors import DataError


def _same(a, b):
    assert a.adjacency.shape == b.adjacency.shape
    np.testing.assert_array_equal(a.adjacency.indptr, b.adjacency.indptr)
    np.testing.assert_array_equal(a.adjacency.indices, b.adjacency.indices)
    assert a.adjacency.data.dtype == bool and a.adjacency.data.all()
    assert a.adjacency.has_sorted_indices


def _random_text(rng, *, n_lines, top, newline, sep, header, comments, extra_column):
    lines = ["# Directed graph", "# Nodes: ? Edges: ?"] if comments else []
    if header:
        lines.append("FromNodeId" + ("," if sep == "," else "\t") + "ToNodeId")
    edges = rng.integers(0, top + 1, size=(n_lines, 2))
    loop_rows = rng.random(n_lines) < 0.05
    edges[loop_rows, 1] = edges[loop_rows, 0]
    rev = rng.random(n_lines) < 0.3  # reversed copies and duplicates of earlier lines
    edges[1:][rev[1:]] = edges[:-1][rev[1:]][:, ::-1]
    dup = rng.random(n_lines) < 0.1
    edges[1:][dup[1:]] = edges[:-1][dup[1:]]
    for k, (u, v) in enumerate(edges):
        if sep == ",":
            fields = [str(u), str(v)]
            line = ",".join(fields + (["-1"] if extra_column else []))
        else:
            gap = ["\t", " ", "  ", " \t"][k % 4]
            line = f"{u}{gap}{v}" + (f"\t{k % 3 - 1}" if extra_column else "")
            if k % 7 == 0:
                line = " " + line + " "
        lines.append(line)
        if comments and k % 50 == 0:
            lines.append("# a comment" if k % 100 else "")
    text = newline.join(lines)
    return text + (newline if rng.random() < 0.5 else "")


@pytest.mark.parametrize("seed", range(12))
def test_streamed_equals_in_memory(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    sep = "," if seed % 4 == 3 else r"\s+"
    extra = seed % 5 == 1
    top = [5, 50, 2000, 10**9, 2**40][seed % 5]  # dense, sparse and int64 ids
    text = _random_text(rng, n_lines=int(rng.integers(1, 600)), top=top,
                        newline=["\n", "\r\n"][seed % 2], sep=sep, header=seed % 3 == 0,
                        comments=seed % 2 == 0, extra_column=extra)
    path = tmp_path / "edges.txt"
    data = text.encode()
    path.write_bytes(gzip.compress(data) if seed % 3 == 1 else data)
    monkeypatch.setattr(edge_stream, "BLOCK_BYTES", int(rng.integers(16, 200)))  # many blocks
    for lcc in (False, True):
        for loop_nodes in (False, True):
            kw = dict(sep=sep, n_columns=3 if extra else 2, loop_nodes=loop_nodes, lcc=lcc)
            _same(graph_from_edge_file(path, **kw), _load_edge_list_in_memory([path], **kw))


def test_compact_dtypes_and_widening(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("3 1\n1 2\n2 3\n")
    chunks = read_edge_chunks(p)
    assert all(u.dtype == np.int32 for u in chunks.us)
    g = graph_from_edge_file(p)
    assert g.adjacency.indices.dtype == np.int32 and g.adjacency.indptr.dtype == np.int32
    p.write_text(f"3 1\n1 {2**31}\n{2**31} 3\n")
    chunks = read_edge_chunks(p)
    assert chunks.top == 2**31 and chunks.us[-1].dtype == np.int64
    assert graph_from_edge_file(p).n_edges == 3


def test_empty_and_comment_only_files(tmp_path):
    for text in ("", "# nothing\n", "\n\n", "From To\n"):
        p = tmp_path / "e.txt"
        p.write_text(text)
        g = graph_from_edge_file(p)
        assert (g.n_nodes, g.n_edges) == (0, 0)


@pytest.mark.parametrize(
    "text, line, problem",
    [
        ("# c\n# c\n1\t2\n3\tx\n5\t6\n", 4, "a field is not an integer"),
        ("1 2\n3 4 5\n6 7\n", 2, "expected 2 fields, found 3"),
        ("1 2\n3 4\n5\n", 3, "expected 2 fields, found 1"),
        ("1 2\r\n3 4.5\r\n", 2, "a field is not an integer"),
        ("1 2\n-3 4\n", 2, "a node id is outside 0"),
        ("From\tTo\n1 2\n3 4\nx y\n", 4, "a field is not an integer"),
        ("1 2\n3 99999999999999999999\n", 2, "an integer is too large"),
    ],
)
@pytest.mark.parametrize("compress", [False, True])
def test_malformed_line_number(tmp_path, monkeypatch, text, line, problem, compress):
    path = tmp_path / "edges.txt"
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    monkeypatch.setattr(edge_stream, "BLOCK_BYTES", 5)
    with pytest.raises(DataError, match=rf"edges\.txt, line {line}: {problem}"):
        graph_from_edge_file(path)


def test_malformed_line_far_in_a_large_file(tmp_path):
    lines = [f"{i} {i + 1}" for i in range(200_000)]
    lines[150_000] = "150000 oops"
    path = tmp_path / "big.txt.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode(), compresslevel=1))
    with pytest.raises(DataError, match=r"big\.txt\.gz, line 150001: .*'150000 oops'"):
        graph_from_edge_file(path)


def test_memory_estimate_and_refusal(tmp_path, monkeypatch):
    edges = np.arange(200_000).reshape(-1, 2)
    text = "\n".join(f"{u}\t{v}" for u, v in edges).encode() + b"\n"
    plain, packed = tmp_path / "e.txt", tmp_path / "e.txt.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    need_plain, basis = estimate_load_memory(plain)
    need_gz, basis_gz = estimate_load_memory(packed)
    assert "file size" in basis and "uncompressed size" in basis_gz
    assert need_plain == need_gz
    lines = len(edges)
    assert need_plain == pytest.approx(lines * edge_stream.BYTES_PER_LINE
                                       + edge_stream.FIXED_BYTES, rel=0.01)
    monkeypatch.setattr(edge_stream, "available_memory", lambda: 10 * 2**20)
    with pytest.raises(DataError) as info:
        graph_from_edge_file(packed)
    message = str(info.value)
    assert "\n" not in message
    assert "GiB of memory to load, 0.0 GiB available" in message


def test_gzip_size_beyond_the_trailer():
    # ISIZE is the size mod 2^32: the candidate nearest the ratio's guess is taken
    resolve = edge_stream._resolve_isize
    assert resolve(100, 2**32 + 50) == 2**32 + 100
    assert resolve(100, 3 * 2**32) == 3 * 2**32 + 100
    assert resolve(2**32 - 10, 2**32 + 50) == 2**32 - 10
    assert resolve(100, 90) == 100
    assert resolve(5, 10**6) is None  # the trailer disagrees with the ratio: guess instead
