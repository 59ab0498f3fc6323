"""Large edge lists -> :class:`Graph`, streamed: no Python object per edge, compact memory.

The file (plain or gzip) is read in blocks of bytes that a numba parser turns into int32
node-id pairs (int64 only for ids past 2^31 - 1); the symmetric CSR adjacency is then built
by a counting sort (int32 indices and indptr while the 2m entries fit), deduplicated and
sorted within each row. The result is the very graph of
:func:`privpub.data.graphs.graph_from_edge_list` on :func:`~privpub.data.readers.read_edge_list`'s
array: same relabelling (ids ``0..n-1`` in sorted id order; direction, duplicates and
self-loops dropped; ids only on self-loop lines dropped unless ``loop_nodes``), same
adjacency arrays. Before reading, :func:`check_memory` compares an estimate of the memory
the load needs with the memory available. docs/design.md (Data: "Large edge lists").
"""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numba as nb
import numpy as np
import scipy.sparse as sp

from privpub.data.readers import (
    WHITESPACE,
    _describe_sep,
    _header_lines,
    _line_problem,
    _split,
    is_gzip,
)
from privpub.errors import DataError
from privpub.types import Graph

__all__ = ["read_edge_chunks", "graph_from_edge_file", "estimate_load_memory", "check_memory",
           "csr_from_chunks", "EdgeChunks"]

#: Bytes of (uncompressed) text parsed per block.
BLOCK_BYTES = 1 << 25
_INT32_MAX = 2**31 - 1
# parser outcomes
_OK, _BAD_LINE, _WIDEN = 0, 1, 2
_NL, _CR, _SPACE, _TAB, _HASH = 10, 13, 32, 9, 35


# --------------------------------------------------------------------------- parsing
@nb.njit(cache=True, nogil=True)
def _parse_block(buf, n_buf, final, sep, comment, n_columns, skip_to, line0, keep_loops,
                 limit, out_u, out_v, loops):
    """Parse the complete lines of ``buf[:n_buf]`` (all of them when ``final``).

    ``sep`` is -1 for runs of spaces/tabs, else a byte; ``comment`` a byte or -1. Lines up
    to number ``skip_to`` (1-based) are skipped. Non-loop pairs go to ``out_u``/``out_v``,
    loop ids to ``loops`` when ``keep_loops``; an id past ``limit`` (the largest value
    of the output arrays' dtype) stops the parse with ``_WIDEN``. Returns (status, pairs
    written, loop ids written, bytes consumed, lines consumed, largest id, start of the bad
    line).
    """
    k = 0
    n_loops = 0
    top = -1
    pos = 0
    line = line0
    while pos < n_buf:
        # find the line's end first: a line cut by the block's end waits for the next block
        end = pos
        while end < n_buf and buf[end] != _NL:
            end += 1
        if end == n_buf and not final:
            break
        line += 1
        start = pos
        pos = end + 1
        if line <= skip_to:
            continue
        i = start
        n_fields = 0
        u = 0
        v = 0
        bad = False
        expect_field = False
        while True:
            while i < end and buf[i] != sep and (buf[i] == _SPACE or buf[i] == _TAB
                                                 or buf[i] == _CR):
                i += 1
            if i == end or buf[i] == comment:
                if sep >= 0 and n_fields > 0 and expect_field:
                    bad = True  # a separator not followed by a field
                break
            if sep >= 0 and n_fields > 0:
                if not expect_field:
                    if buf[i] != sep:
                        bad = True
                        break
                    i += 1
                    expect_field = True
                    continue
            # one integer field
            negative = False
            if buf[i] == 45 or buf[i] == 43:  # '-' or '+'
                negative = buf[i] == 45
                i += 1
            value = 0
            digits = 0
            while i < end and 48 <= buf[i] <= 57:
                d = buf[i] - 48
                if value > (9223372036854775807 - d) // 10:
                    bad = True
                    break
                value = value * 10 + d
                digits += 1
                i += 1
            if bad or digits == 0:
                bad = True
                break
            if i < end and not (buf[i] == _SPACE or buf[i] == _TAB or buf[i] == _CR
                                or buf[i] == comment or buf[i] == sep):
                bad = True
                break
            n_fields += 1
            expect_field = False
            if n_fields > n_columns:
                bad = True
                break
            if n_fields <= 2:
                if negative and value != 0:
                    bad = True
                    break
                if n_fields == 1:
                    u = value
                else:
                    v = value
        if not bad and n_fields == 0:
            continue  # blank or comment line
        if bad or n_fields != n_columns:
            return _BAD_LINE, k, n_loops, start, line - 1, top, start
        big = u if u > v else v
        if big > limit:
            return _WIDEN, k, n_loops, start, line - 1, top, start
        if big > top:
            top = big
        if u != v:
            out_u[k] = u
            out_v[k] = v
            k += 1
        elif keep_loops:
            loops[n_loops] = u
            n_loops += 1
    return _OK, k, n_loops, pos if pos < n_buf else n_buf, line, top, -1


@dataclass
class EdgeChunks:
    """An edge list as blocks of node-id pairs, self-loops left out.

    Attributes
    ----------
    us, vs : list of numpy.ndarray
        The pairs of each block (int32, or int64 for a block with an id past 2^31 - 1).
    loops : numpy.ndarray
        The distinct ids of the self-loop lines (read only with ``loop_nodes``).
    top : int
        The largest id (-1 for no data line).
    n_lines : int
        Physical lines read.
    """

    us: list = field(default_factory=list)
    vs: list = field(default_factory=list)
    loops: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    top: int = -1
    n_lines: int = 0

    @property
    def n_pairs(self) -> int:
        return sum(u.size for u in self.us)


def _open(path):
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def _bad_line_error(path, data: bytes, number: int, *, sep, comment, n_columns, what):
    line = data.split(b"\n", 1)[0].decode("utf-8", errors="replace").rstrip("\r\n")
    problem = _line_problem(_split(line, sep, comment), n_columns=n_columns, id_columns=2,
                            id_min=0, id_max=None) or "an integer is too large"
    shown = line if len(line) <= 80 else line[:77] + "..."
    return DataError(
        f"malformed {what} {path}, line {number}: {problem} "
        f"(expected {n_columns} integers separated by {_describe_sep(sep)}): {shown!r}"
    )


def read_edge_chunks(path, *, sep: str = WHITESPACE, n_columns: int = 2, comment: str = "#",
                     loop_nodes: bool = False, block_bytes: int | None = None) -> EdgeChunks:
    """Stream a SNAP-style edge list into :class:`EdgeChunks` (the format of
    :func:`~privpub.data.readers.read_edge_list`: ``#`` comments, LF or CRLF, runs of
    tabs/spaces or a single-character separator, gzip, one optional header line).

    Raises
    ------
    DataError
        Naming the file and its first bad line (number and text), as ``read_edge_list``.
    """
    if sep != WHITESPACE and len(sep) != 1:
        raise DataError(f"separator must be {WHITESPACE!r} or one character, got {sep!r}")
    block_bytes = block_bytes or BLOCK_BYTES
    sep_byte = -1 if sep == WHITESPACE else ord(sep)
    comment_byte = ord(comment) if comment else -1
    skip_to = _header_lines(path, sep, comment)
    out = EdgeChunks()
    loops = []
    dtype = np.int32
    cap = block_bytes // 4 + 2
    bu, bv = np.empty(cap, dtype), np.empty(cap, dtype)
    bl = np.empty(cap if loop_nodes else 0, dtype)
    line = 0
    rest = b""
    with _open(path) as f:
        final = False
        while not final:
            chunk = f.read(block_bytes)
            final = not chunk
            data = rest + chunk if rest else chunk
            buf = np.frombuffer(data, dtype=np.uint8)
            pos = 0
            while True:  # more than once only to widen to int64
                status, k, n_loops, used, line, top, bad = _parse_block(
                    buf[pos:], buf.size - pos, final, sep_byte, comment_byte, n_columns,
                    skip_to, line, loop_nodes, np.iinfo(dtype).max, bu, bv, bl)
                if k:
                    out.us.append(bu[:k].copy())
                    out.vs.append(bv[:k].copy())
                if n_loops:
                    loops.append(np.unique(bl[:n_loops]))
                out.top = max(out.top, top)
                pos += used
                if status == _WIDEN:
                    dtype = np.int64
                    bu, bv = np.empty(cap, dtype), np.empty(cap, dtype)
                    bl = np.empty(bl.size, dtype)
                    continue
                if status == _BAD_LINE:
                    raise _bad_line_error(path, data[pos:pos + 4096], line + 1, sep=sep,
                                          comment=comment, n_columns=n_columns,
                                          what="edge list")
                break
            rest = data[pos:]
            if rest and len(rest) > 64 * block_bytes:
                raise DataError(f"malformed edge list {path}, line {line + 1}: a line longer "
                                f"than {64 * block_bytes:,} bytes")
    out.n_lines = line
    if loops:
        out.loops = np.unique(np.concatenate(loops).astype(np.int64))
    return out


# --------------------------------------------------------------------------- CSR
@nb.njit(cache=True, nogil=True)
def _mark(ids, present):
    for i in range(ids.size):
        present[ids[i]] = True


@nb.njit(cache=True, nogil=True)
def _count(u, v, new_id, counts):
    for i in range(u.size):
        counts[new_id[u[i]] + 1] += 1
        counts[new_id[v[i]] + 1] += 1


@nb.njit(cache=True, nogil=True)
def _fill(u, v, new_id, next_free, indices):
    for i in range(u.size):
        a = new_id[u[i]]
        b = new_id[v[i]]
        indices[next_free[a]] = b
        next_free[a] += 1
        indices[next_free[b]] = a
        next_free[b] += 1


@nb.njit(cache=True, nogil=True)
def _sort_dedup(indptr, indices):
    """Sort each row and drop repeated entries, in place; returns the number kept."""
    n = indptr.size - 1
    write = 0
    start = indptr[0]
    for r in range(n):
        end = indptr[r + 1]
        if end - start > 32:
            indices[start:end].sort()
        else:  # insertion sort: faster than a call to quicksort on short rows
            for t in range(start + 1, end):
                x = indices[t]
                s = t - 1
                while s >= start and indices[s] > x:
                    indices[s + 1] = indices[s]
                    s -= 1
                indices[s + 1] = x
        indptr[r] = write
        prev = -1
        for t in range(start, end):
            x = indices[t]
            if x != prev:
                indices[write] = x
                write += 1
                prev = x
        start = end
    indptr[n] = write
    return write


def _id_map(chunks: EdgeChunks) -> tuple[np.ndarray, int, bool]:
    """(old id -> new id, n, dense): ids in sorted order, as ``graphs._relabel`` maps them."""
    top = chunks.top
    size = 2 * chunks.n_pairs + chunks.loops.size
    if top < 0 or size == 0:
        return np.empty(0, np.int32), 0, True
    if top < 2 * size + 1_000_000:  # dense enough ids: one flag per id, no sort
        present = np.zeros(top + 1, dtype=bool)
        for u, v in zip(chunks.us, chunks.vs, strict=True):
            _mark(u, present)
            _mark(v, present)
        present[chunks.loops] = True
        n = int(np.count_nonzero(present))
        new_id = np.cumsum(present, dtype=np.int32 if n <= _INT32_MAX else np.int64)
        new_id -= 1
        return new_id, n, True
    ids = np.unique(np.concatenate([*chunks.us, *chunks.vs, chunks.loops.astype(np.int64)]))
    return ids, int(ids.size), False


def csr_from_chunks(chunks: EdgeChunks) -> sp.csr_array:
    """The symmetric boolean adjacency of ``chunks`` relabelled ``0..n-1`` in sorted id
    order (sorted indices, no duplicates); the chunks' arrays are consumed."""
    new_id, n, dense = _id_map(chunks)
    if not dense:  # sparse ids: map each block by binary search (ids sorted)
        dtype = np.int32 if n <= _INT32_MAX else np.int64
        for i in range(len(chunks.us)):
            chunks.us[i] = np.searchsorted(new_id, chunks.us[i]).astype(dtype)
            chunks.vs[i] = np.searchsorted(new_id, chunks.vs[i]).astype(dtype)
        new_id = np.arange(n, dtype=dtype)
    counts = np.zeros(n + 1, dtype=np.int64)
    for u, v in zip(chunks.us, chunks.vs, strict=True):
        _count(u, v, new_id, counts)
    np.cumsum(counts, out=counts)
    total = int(counts[-1])
    index_dtype = np.int32 if max(total, n) <= _INT32_MAX else np.int64
    indices = np.empty(total, dtype=index_dtype)
    next_free = counts[:-1].copy()
    while chunks.us:  # free each block as soon as it is placed
        _fill(chunks.us.pop(0), chunks.vs.pop(0), new_id, next_free, indices)
    del next_free, new_id
    nnz = _sort_dedup(counts, indices)
    if nnz < indices.size:
        indices = indices[:nnz].copy()
    indptr = counts.astype(index_dtype)
    del counts
    adj = sp.csr_array((np.ones(nnz, dtype=bool), indices, indptr), shape=(n, n), copy=False)
    adj.has_sorted_indices = True
    adj.has_canonical_format = True
    return adj


# --------------------------------------------------------------------------- memory
#: Peak bytes per edge-list line of a load: measured 16 (benchmarks/bench_edge_list_load.py,
#: 34M lines: the int32 pairs 8, the CSR indices 8, the boolean data 2, the per-node
#: arrays), with room for the trimmed copy of the indices when the file repeats edges.
BYTES_PER_LINE = 24
#: ... with ``lcc=True``: measured 57 (scipy's induced subgraph copies the adjacency twice).
BYTES_PER_LINE_LCC = 72
#: Fixed part: the interpreter with privpub's imports (measured 0.3 GiB), parse buffers.
FIXED_BYTES = 400 * 2**20


def _text_sample(path) -> tuple[int, bytes, str]:
    """(uncompressed size in bytes, the first MiB or more of the text, how the size was
    found)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(1 << 20)
        if not head.startswith(b"\x1f\x8b"):
            return size, head, "file size"
        # gzip's trailer holds the size mod 2^32 (of its last member): take the candidate
        # ISIZE + k 2^32 nearest to the compressed size times the first MiB's ratio
        f.seek(max(size - 4, 0))
        isize = int.from_bytes(f.read(4), "little")
    inflate = zlib.decompressobj(wbits=31)
    try:
        text = inflate.decompress(head)
    except zlib.error as exc:
        raise DataError(f"{path}: not a valid gzip file ({exc})") from None
    used = len(head) - len(inflate.unused_data)
    if inflate.eof and not inflate.unused_data and used == size:  # all of it, one member
        return len(text), text, "uncompressed size"
    guess = size * len(text) / max(used, 1)
    resolved = _resolve_isize(isize, guess)
    if resolved is not None:
        return resolved, text, "gzip trailer's size, mod 2^32 resolved by the first MiB's ratio"
    return int(guess), text, "compressed size x the first MiB's compression ratio"


def _resolve_isize(isize: int, guess: float) -> int | None:
    """The size ``isize + k 2^32`` nearest to ``guess``; None if even that one is off by
    more than a factor 2 (a multi-member file: ISIZE is its last member's)."""
    candidate = isize + max(round((guess - isize) / 2**32), 0) * 2**32
    return candidate if 0.5 * guess <= candidate <= 2 * guess else None


def estimate_load_memory(path, *, lcc: bool = False) -> tuple[int, str]:
    """Estimated peak memory (bytes) of :func:`graph_from_edge_file` on ``path``, and its basis.

    The number of lines is the uncompressed size over the average line length of the first
    MiB (for gzip, the size comes from the trailer's ISIZE, which is the size mod 2^32,
    resolved with the first MiB's compression ratio); each line costs
    :data:`BYTES_PER_LINE` (:data:`BYTES_PER_LINE_LCC` with ``lcc``) plus :data:`FIXED_BYTES`.
    """
    text, sample, how = _text_sample(path)
    sample = sample[:1 << 20]
    n_lines = sample.count(b"\n") + (1 if sample and not sample.endswith(b"\n") else 0)
    per_line = max(len(sample) / max(n_lines, 1), 4.0)
    lines = text / per_line
    cost = BYTES_PER_LINE_LCC if lcc else BYTES_PER_LINE
    need = int(lines * cost + FIXED_BYTES)
    basis = (f"{text / 2**20:,.0f} MiB of text ({how}) / {per_line:.1f} bytes per line (first "
             f"MiB) = {lines / 1e6:,.1f}M lines x {cost} bytes + {FIXED_BYTES >> 20} MiB")
    return need, basis


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where there is none)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(path, *, lcc: bool = False) -> None:
    """Raise a one-line :class:`DataError` when the load of ``path`` would not fit in the
    available memory (:func:`estimate_load_memory`); nothing where that is unknown."""
    available = available_memory()
    if available is None:
        return
    need, basis = estimate_load_memory(path, lcc=lcc)
    if need > available:
        raise DataError(
            f"edge list {path} needs about {need / 2**30:.1f} GiB of memory to load, "
            f"{available / 2**30:.1f} GiB available ({basis})"
        )


# --------------------------------------------------------------------------- graph
def graph_from_edge_file(path, *, sep: str = WHITESPACE, n_columns: int = 2,
                         loop_nodes: bool = False, lcc: bool = False,
                         check_fits: bool = True) -> Graph:
    """The undirected simple graph of an edge-list file, streamed.

    Parameters
    ----------
    path : path-like
        Plain or gzip text (gzip is detected from the first bytes).
    sep, n_columns
        As :func:`~privpub.data.readers.read_edge_list`; columns after the first two are
        checked to be integers and ignored.
    loop_nodes : bool
        Keep the ids that occur only on self-loop lines, as isolated nodes.
    lcc : bool
        Keep the largest connected component.
    check_fits : bool
        First compare the estimated memory with the available memory
        (:func:`check_memory`).

    Raises
    ------
    DataError
        Malformed line (its number and text), or not enough memory.
    """
    from privpub.data.graphs import largest_connected_component

    path = Path(path)
    if check_fits:
        check_memory(path, lcc=lcc)
    chunks = read_edge_chunks(path, sep=sep, n_columns=n_columns, loop_nodes=loop_nodes)
    graph = Graph(csr_from_chunks(chunks))
    return largest_connected_component(graph) if lcc else graph
