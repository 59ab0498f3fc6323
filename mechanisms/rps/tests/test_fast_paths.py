"""The compiled kernels of the RPS partition and quality against simple references (the
numpy code they replaced), and whole releases pinned to the values the earlier code gave:
the fast paths must give bit-identical trees, draws and releases."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privpub.ledger import PrivacyLedger
from privpub.mechanisms.rps import ClassBalance, quality_class
from privpub.mechanisms.rps.partition import (
    _candidate_range,
    _row_groups,
    _split_rows,
    cut_groups,
)
from privpub.mechanisms.rps.table import rps_table
from privpub.noise import noise_off

sys.path.insert(0, str(Path(__file__).parent))
from test_table import mixed_table  # noqa: E402


def reference_cut_groups(values, kmin, kmax, *, discrete, granularity=1.0, labels=None):
    """The numpy implementation of ``cut_groups`` before the kernel (counting on narrow
    discrete regions, ``np.unique`` / a stable sort otherwise):
    ``(k_first, size, left, left_pos)``."""
    values = np.asarray(values, dtype=float)
    if kmin > kmax:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, None if labels is None else empty
    width = kmax - kmin + 2
    if discrete and width <= 4 * values.size + 64:
        codes = np.clip(values.astype(np.int64) - (kmin - 1), 0, width - 1)
        cnt = np.bincount(codes, minlength=width)
        nz = np.flatnonzero(cnt)
        u = (nz + (kmin - 1)).astype(float)
        cum_pos = None
        if labels is not None:
            pos = np.bincount(codes, weights=labels, minlength=width)
            cum_pos = np.cumsum(pos)[nz].astype(np.int64)
        cnt = cnt[nz]
    elif labels is None:
        u, cnt = np.unique(values, return_counts=True)
        cum_pos = None
    else:
        order = np.argsort(values, kind="stable")
        vs = values[order]
        change = np.empty(vs.size, dtype=bool)
        np.not_equal(vs[1:], vs[:-1], out=change[:-1])
        change[-1:] = True
        last = np.flatnonzero(change)
        cum_pos = np.cumsum(np.asarray(labels, dtype=np.int64)[order])[last]
        u, cnt = vs[last], np.diff(last, prepend=-1)
    m = u.size
    b = u if discrete else np.floor(u / granularity)
    edges = np.empty(m + 2, dtype=np.int64)
    edges[0] = kmin - 1
    edges[1:-1] = np.clip(b, kmin - 1, kmax)
    edges[-1] = kmax
    size = np.diff(edges)
    left = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(cnt, out=left[1:])
    keep = size > 0
    left_pos = None
    if cum_pos is not None:
        left_pos = np.zeros(m + 1, dtype=np.int64)
        left_pos[1:] = cum_pos
        left_pos = left_pos[keep]
    return edges[:-1][keep] + 1, size[keep], left[keep], left_pos


def _random_axis(rng):
    discrete = bool(rng.random() < 0.5)
    g = 1.0 if discrete else float(rng.choice([0.3, 0.5, 1.0, 2.5]))
    n = int(rng.choice([0, 1, 5, 40, 400]))
    if discrete:
        # narrow and wide regions (counting and sorting), values also outside the region
        span = int(rng.choice([5, 50, 5000]))
        values = rng.integers(-3, span + 3, n).astype(float)
        kmin, kmax = int(rng.integers(-4, 3)), int(rng.integers(2, span + 1))
    else:
        values = np.round(rng.uniform(-5, 12, n), int(rng.integers(0, 3)))
        kmin, kmax = int(np.floor(-5 / g)) + 1, int(np.ceil(12 / g)) - 1
    return values, kmin, kmax, discrete, g


@pytest.mark.parametrize("seed", range(60))
def test_group_kernel_equals_the_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    values, kmin, kmax, discrete, g = _random_axis(rng)
    labels = rng.integers(0, 2, values.size)
    for lab in (None, labels):
        got = cut_groups(values, kmin, kmax, discrete=discrete, granularity=g, labels=lab)
        want = reference_cut_groups(values, kmin, kmax, discrete=discrete, granularity=g,
                                    labels=lab)
        for a, b in zip((got.k_first, got.size, got.left, got.left_pos), want, strict=True):
            if b is None:
                assert a is None
            else:
                assert a.dtype == np.int64 and np.array_equal(a, b)
    # on a subset of rows of a longer column (what the partition passes) with the positives
    column = np.concatenate([values, rng.uniform(-100, 100, 7)])
    rows = np.sort(rng.permutation(column.size)[: values.size])
    full_labels = rng.integers(0, 2, column.size)
    got, positives = _row_groups(column, rows, full_labels, kmin, kmax, discrete, g)
    want = reference_cut_groups(column[rows], kmin, kmax, discrete=discrete, granularity=g,
                                labels=full_labels[rows])
    for a, b in zip((got.k_first, got.size, got.left, got.left_pos), want, strict=True):
        assert np.array_equal(a, b)
    assert positives == (int(full_labels[rows].sum()) if kmin <= kmax else 0)


@pytest.mark.parametrize("seed", range(20))
def test_split_and_candidate_kernels_equal_numpy(seed):
    rng = np.random.default_rng(seed)
    column = np.round(rng.uniform(-10, 10, 200), 1)
    rows = rng.permutation(200)[: int(rng.integers(0, 200))].astype(np.int64)
    t = float(rng.uniform(-11, 11))
    left, right = _split_rows(column, rows, t)
    mask = column[rows] < t
    assert np.array_equal(left, rows[mask]) and np.array_equal(right, rows[~mask])
    assert left.dtype == right.dtype == np.int64
    d = 6
    g = rng.choice([0.1, 0.3, 1.0, 2.5], d)
    discrete_f = (rng.random(d) < 0.5).astype(float)
    g[discrete_f == 1.0] = 1.0
    lo = np.round(rng.uniform(-20, 20, d), 2)
    lo[discrete_f == 1.0] = np.floor(lo[discrete_f == 1.0])
    hi = lo + rng.choice([0.0, 0.05, 1.0, 3.7, 40.0], d)
    kmin, kmax, splittable = _candidate_range(lo, hi, g, discrete_f)
    want_min = (np.floor(lo / g) + 1.0).astype(np.int64)
    want_max = (np.ceil(hi / g) - 1.0 + discrete_f).astype(np.int64)
    assert np.array_equal(kmin, want_min) and np.array_equal(kmax, want_max)
    assert splittable == bool((want_min <= want_max).any())


@pytest.mark.parametrize("seed", range(10))
def test_class_quality_kernel_equals_quality_class(seed):
    rng = np.random.default_rng(seed)
    total = int(rng.integers(0, 5000))
    left = np.sort(rng.integers(0, total + 1, 50)).astype(np.int64)
    total_pos = int(rng.integers(0, total + 1))
    left_pos = np.minimum(left, rng.integers(0, total_pos + 1, 50)).astype(np.int64)
    got = ClassBalance()(left, float(total), left_pos, float(total_pos))
    want = quality_class(left, float(total), left_pos, float(total_pos))
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_one_draw_of_an_integer_as_scalar_or_size_one_is_the_same():
    """The random attribute is drawn as ``rng.integers(n)``; the earlier code drew
    ``rng.integers(n, size=1)``: numpy consumes the same bits for both."""
    for seed in range(20):
        a, b, r = (np.random.default_rng(seed), np.random.default_rng(seed),
                   np.random.default_rng(seed + 99))
        for _ in range(200):
            n = int(r.choice([1, 2, 3, 10, 11, 1 << 31, (1 << 32) - 1, 1 << 40]))
            assert a.integers(n, size=1)[0] == b.integers(n)
            assert a.laplace(0.0, 1.0) == b.laplace(0.0, 1.0)


def _digest(release, ledger) -> str:
    frame = release.value.data
    h = hashlib.sha256()
    for name in frame.columns:
        h.update(name.encode())
        h.update("|".join(map(repr, frame[name].tolist())).encode())
    h.update(repr(sorted(release.info.items())).encode())
    h.update(ledger.to_json().encode())
    return h.hexdigest()[:20]


# digests of the releases the numpy implementation (before the kernels) gave
@pytest.mark.parametrize("kw, noise_free, expected", [
    (dict(epsilon=2.0, depth=20, stop_count=0.0, attributes="random", quality="class"),
     False, "3c2f59eac0b5bcafd2b9"),
    (dict(epsilon=1.0, depth=8, granularity=0.3, summary="midpoint"), False,
     "ffc632dc609a5d0e6dab"),
    (dict(epsilon=3.0, depth=15, stop_count=2.0, granularity=0.5, quality="class",
          level_ratio=0.8), False, "471ebd1ec6f24a8fd2c5"),
    (dict(epsilon=1.0, depth=30, stop_count=1.0, attributes="random", quality="class"),
     True, "4d5948d3ad2c2a6231e2"),
])
def test_releases_are_those_of_the_earlier_code(kw, noise_free, expected):
    table = mixed_table(n=400, seed=5)
    ledger = PrivacyLedger(kw["epsilon"])
    if noise_free:
        with noise_off():
            release = rps_table(table, rng=np.random.default_rng(7), ledger=ledger, **kw)
    else:
        release = rps_table(table, rng=np.random.default_rng(7), ledger=ledger, **kw)
    assert isinstance(release.value.data, pd.DataFrame)
    assert _digest(release, ledger) == expected
