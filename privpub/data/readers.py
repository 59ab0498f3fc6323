"""Fast readers for the graph file formats of the datasets (all vectorised).

Every reader returns plain integer arrays (or a sparse matrix) and raises
:class:`~privpub.errors.DataError` naming the file and the first bad line when the file is
malformed, never a pandas or numpy traceback. Gzip compression is detected from the file's
first bytes, not its name (``.jlg`` files are gzip).

The fast path is one :func:`pandas.read_csv` call with the C engine. Only when it fails does
a diagnostic pass read the file line by line to find the first bad line; a well-formed file
is never looped over in Python.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from privpub.errors import DataError

__all__ = [
    "is_gzip",
    "read_edge_list",
    "read_lg",
    "read_matrix_market",
    "read_mat_variable",
]

WHITESPACE = r"\s+"
_PARSE_ERRORS = (ValueError, OverflowError, pd.errors.ParserError, UnicodeDecodeError)


def is_gzip(path: str | os.PathLike) -> bool:
    """Whether the file starts with the gzip magic bytes."""
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _compression(path) -> str | None:
    return "gzip" if is_gzip(path) else None


def _lines(path) -> Iterator[str]:
    """Physical lines of a (possibly gzip) text file, without line terminators."""
    opener = gzip.open if is_gzip(path) else open
    with opener(path, "rb") as raw, io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as f:
        for line in f:
            yield line.rstrip("\r\n")


def _split(line: str, sep: str, comment: str | None) -> list[str]:
    if comment:
        line = line.split(comment, 1)[0]
    if sep == WHITESPACE:
        return line.split()
    return [] if not line.strip() else [x.strip() for x in line.split(sep)]


def _describe_sep(sep: str) -> str:
    return {WHITESPACE: "tabs or spaces", ",": "commas", "\t": "tabs"}.get(sep, repr(sep))


def _first_bad_line(
    path, *, skip: int, sep: str, comment: str | None, n_columns: int,
    id_columns: int, id_min: int, id_max: int | None,
) -> tuple[int, str, str] | None:
    """Diagnostic pass: (line number, line, problem) of the first malformed line, or None."""
    for number, line in enumerate(_lines(path), start=1):
        if number <= skip:
            continue
        problem = _line_problem(_split(line, sep, comment), n_columns=n_columns,
                                id_columns=id_columns, id_min=id_min, id_max=id_max)
        if problem:
            return number, line, problem
    return None


def _line_problem(fields: list[str], *, n_columns: int, id_columns: int, id_min: int,
                  id_max: int | None) -> str | None:
    """What is wrong with one line's fields (None: nothing, or a blank/comment line)."""
    if not fields:
        return None
    if len(fields) != n_columns:
        return f"expected {n_columns} fields, found {len(fields)}"
    try:
        values = [int(x) for x in fields]
    except ValueError:
        return "a field is not an integer"
    if any(abs(v) >= 2**63 for v in values):
        return "an integer is too large"
    ids = values[:id_columns]
    if min(ids) < id_min or (id_max is not None and max(ids) > id_max):
        upper = "" if id_max is None else f"..{id_max}"
        return f"a node id is outside {id_min}{upper}"
    return None


def _read_int_table(
    path, *, skip: int = 0, sep: str = WHITESPACE, comment: str | None = "#",
    n_columns: int = 2, id_columns: int = 2, id_min: int = 0, id_max: int | None = None,
    what: str = "edge list",
) -> np.ndarray:
    """All data lines of ``path`` as an ``(m, n_columns)`` int64 array, or a DataError."""
    path = Path(path)
    diag = dict(skip=skip, sep=sep, comment=comment, n_columns=n_columns,
                id_columns=id_columns, id_min=id_min, id_max=id_max)

    def fail(reason: str) -> DataError:
        bad = _first_bad_line(path, **diag)
        if bad is None:
            return DataError(f"malformed {what} {path}: {reason}")
        number, line, problem = bad
        shown = line if len(line) <= 80 else line[:77] + "..."
        return DataError(
            f"malformed {what} {path}, line {number}: {problem} "
            f"(expected {n_columns} integers separated by {_describe_sep(sep)}): {shown!r}"
        )

    try:
        df = pd.read_csv(
            path, sep=sep, header=None, comment=comment, skiprows=skip, dtype=np.int64,
            engine="c", compression=_compression(path), skip_blank_lines=True,
        )
    except pd.errors.EmptyDataError:
        return np.empty((0, n_columns), dtype=np.int64)
    except _PARSE_ERRORS as exc:
        raise fail(str(exc).strip()) from None
    if df.shape[1] != n_columns:
        raise fail(f"expected {n_columns} columns, found {df.shape[1]}")
    data = df.to_numpy(dtype=np.int64)
    ids = data[:, :id_columns]
    if ids.size and (ids.min() < id_min or (id_max is not None and ids.max() > id_max)):
        raise fail("node id out of range")
    return data


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def read_edge_list(
    path: str | os.PathLike, *, sep: str = WHITESPACE, n_columns: int = 2, comment: str = "#"
) -> np.ndarray:
    """Read a SNAP-style edge list: one ``u v [extra...]`` line per edge.

    Handles ``#`` comment lines, CRLF or LF line endings, tab- or space-separated fields
    (``sep=r"\\s+"``, the default) or commas (``sep=","``), gzip, and one header line of
    non-numeric field names as the first non-comment line (``FromNodeId<TAB>ToNodeId`` in
    the ca-HepPh copy, ``id_1,id_2`` in MUSAE's CSV).

    Parameters
    ----------
    path : path-like
    sep : str
        Field separator: ``r"\\s+"`` (any run of tabs/spaces) or a single character.
    n_columns : int
        Fields per line; the first two are node ids (>= 0), the rest are kept as integers.
    comment : str
        Comment character.

    Returns
    -------
    numpy.ndarray
        ``(m, n_columns)`` int64 array with the file's ids as they are.

    Raises
    ------
    DataError
        Naming the file and its first bad line (wrong field count, non-integer field,
        negative id).
    """
    skip = _header_lines(path, sep, comment)
    return _read_int_table(path, skip=skip, sep=sep, comment=comment, n_columns=n_columns)


def _header_lines(path, sep: str, comment: str | None) -> int:
    """The line number of a header of column names (the first line that is neither blank
    nor a comment, when none of its fields is an integer), else 0."""
    for number, line in enumerate(_lines(path), start=1):
        fields = _split(line, sep, comment)
        if not fields:
            continue
        return number if not any(_is_int(x) for x in fields) else 0
    return 0


def read_lg(path: str | os.PathLike) -> tuple[int, bool, np.ndarray]:
    """Read a Graphs.jl LG file (as stored by SNAPDatasets.jl; usually gzip).

    The first line is ``n,m,d|u,name[,...]``; each further line is ``u,v`` with 1-based ids.

    Returns
    -------
    n : int
        Number of vertices declared by the header.
    directed : bool
        True for ``d``, False for ``u``.
    edges : numpy.ndarray
        ``(m, 2)`` int64 array of 0-based ids.

    Raises
    ------
    DataError
        If the header is malformed, a line is bad, or the number of edge lines differs from
        the header's ``m``.
    """
    path = Path(path)
    header = next(_lines(path), "")
    parts = [p.strip() for p in header.split(",")]
    if len(parts) < 4 or not (_is_int(parts[0]) and _is_int(parts[1])) or parts[2] not in "du":
        raise DataError(
            f"malformed LG file {path}, line 1: expected a header 'n,m,d|u,name,...', "
            f"got {header[:80]!r}"
        )
    n, m, directed = int(parts[0]), int(parts[1]), parts[2] == "d"
    edges = _read_int_table(path, skip=1, sep=",", comment=None, id_min=1, id_max=n,
                            what="LG file")
    if edges.shape[0] != m:
        raise DataError(
            f"LG file {path} declares {m} edges in its header but holds {edges.shape[0]} "
            "edge lines (truncated or corrupt file?)"
        )
    return n, directed, edges - 1


def read_matrix_market(path: str | os.PathLike) -> tuple[tuple[int, int], np.ndarray]:
    """Read a MatrixMarket ``coordinate`` file (possibly gzip) as 0-based index pairs.

    ``pattern`` files give every listed entry; ``integer``/``real`` files give the entries
    whose value is non-zero. Symmetry is not expanded (graphs are symmetrised anyway).

    Returns
    -------
    shape : (int, int)
    entries : numpy.ndarray
        ``(nnz, 2)`` int64 array of 0-based (row, column) pairs.
    """
    path = Path(path)
    lines = _lines(path)
    banner = next(lines, "")
    words = banner.lower().split()
    # Network Repository writes the banner with one '%' instead of the standard two
    if (len(words) < 5 or words[0] not in ("%%matrixmarket", "%matrixmarket")
            or words[1] != "matrix"):
        raise DataError(
            f"malformed MatrixMarket file {path}, line 1: expected a "
            f"'%%MatrixMarket matrix coordinate ...' banner, got {banner[:80]!r}"
        )
    fmt, field = words[2], words[3]
    if fmt != "coordinate" or field not in ("pattern", "integer", "real"):
        raise DataError(
            f"MatrixMarket file {path}: only 'coordinate' pattern/integer/real matrices are "
            f"supported as graphs, got {fmt!r} {field!r}"
        )
    number, size = 1, ""
    for line in lines:  # skip comment lines up to the size line
        number += 1
        if line.strip() and not line.lstrip().startswith("%"):
            size = line
            break
    dims = size.split()
    if len(dims) != 3 or not all(_is_int(x) for x in dims):
        raise DataError(
            f"malformed MatrixMarket file {path}, line {number}: expected a size line "
            f"'rows cols nnz', got {size[:80]!r}"
        )
    n_rows, n_cols, nnz = (int(x) for x in dims)
    if field == "pattern":
        entries = _read_int_table(path, skip=number, comment="%", id_min=1,
                                  id_max=max(n_rows, n_cols), what="MatrixMarket file")
        n_read = entries.shape[0]
    else:
        try:
            df = pd.read_csv(path, sep=WHITESPACE, header=None, comment="%", skiprows=number,
                             engine="c", compression=_compression(path),
                             dtype={0: np.int64, 1: np.int64, 2: np.float64})
        except _PARSE_ERRORS + (pd.errors.EmptyDataError,) as exc:
            raise DataError(f"malformed MatrixMarket file {path}: {exc}") from None
        if df.shape[1] != 3:
            raise DataError(f"MatrixMarket file {path}: expected 3 columns, got {df.shape[1]}")
        n_read = len(df)
        entries = df.iloc[:, :2].to_numpy(dtype=np.int64)[df[2].to_numpy() != 0]
    if n_read != nnz:
        raise DataError(
            f"MatrixMarket file {path} declares {nnz} entries but holds {n_read} "
            "(truncated or corrupt file?)"
        )
    if entries.size and (entries.min() < 1 or entries[:, 0].max() > n_rows
                         or entries[:, 1].max() > n_cols):
        raise DataError(f"MatrixMarket file {path}: an index is outside the declared size "
                        f"{n_rows} x {n_cols}")
    return (n_rows, n_cols), entries - 1


def read_mat_variable(path: str | os.PathLike, *, variable: str, field: str | None = None):
    """One variable (or one field of a struct variable) of a MATLAB .mat file.

    Parameters
    ----------
    path : path-like
    variable : str
        Variable name, e.g. ``"A"`` (Facebook100) or ``"Problem"`` (SuiteSparse).
    field : str, optional
        Struct field, e.g. ``"A"`` for SuiteSparse's ``Problem.A``.
    """
    import scipy.io

    path = Path(path)
    try:
        mat = scipy.io.loadmat(path, variable_names=[variable], simplify_cells=True)
    except (ValueError, OSError, TypeError, NotImplementedError) as exc:
        raise DataError(f"cannot read MATLAB file {path}: {exc}") from None
    if variable not in mat:
        raise DataError(f"MATLAB file {path} has no variable {variable!r}")
    value = mat[variable]
    if field is not None:
        if not isinstance(value, dict) or field not in value:
            raise DataError(f"MATLAB file {path}: variable {variable!r} has no field {field!r}")
        value = value[field]
    return value
