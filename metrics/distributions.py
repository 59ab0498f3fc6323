"""Distances between one-dimensional distributions: EMD, KS and L1.

Three kinds of release are compared with the truth of the same kind:

- ``degree_histogram`` (:class:`~privpub.types.DegreeHistogram`): counts per degree
  ``0, 1, 2, ...``, possibly noisy (negative, non-integer). They are turned into a
  *distribution* by clipping negative counts at 0 and dividing by the total
  (:func:`histogram_distribution`), as day2016 Algorithm 4 line 7 does
  (``d = h' / ||h'||_1``). Histograms of different lengths are zero-padded to the longer one
  (day2016 Sec. 2.1, following Sala et al.'s procedure: "pad d with 0 if its size is less
  than |V|").
- ``degree_sequence`` (:class:`~privpub.types.DegreeSequence`): one (possibly noisy)
  degree per node; compared as samples (EMD, KS), or through its histogram after rounding
  to the nearest integer degree >= 0 (L1, which is defined on histograms).
- ``table`` (:class:`~privpub.types.Table`) with one numeric attribute: the released
  synthetic values are compared with the original ones as samples (qardaji2012 Sec. 4.1,
  Fig. 1).

Metrics registered here (all lower-is-better):

========================  ==============================================  ====================
name                      what                                            kinds
========================  ==============================================  ====================
``emd``                   1-Wasserstein distance (EMD)                    histogram, seq., table
``emd_p2``                2nd Mallows distance (qardaji2012's formula)    histogram, seq., table
``ks``                    Kolmogorov-Smirnov distance                     histogram, seq., table
``ks_sampled``            KS of a degree sequence sampled from release    histogram
``l1``                    L1 distance of distributions (normalised)       histogram, sequence
``l1_counts``             L1 distance of raw counts (not normalised)      histogram, sequence
========================  ==============================================  ====================

References
----------
.. [day2016] W.-Y. Day, N. Li, M. Lyu. Publishing Graph Degree Distribution with Node
   Differential Privacy. SIGMOD 2016. Sec. 2.1 (L1 and KS), Sec. 4.1 (KS on sampled
   degree sequences), Table 2 (L1 of count histograms).
.. [qardaji2012] W. Qardaji, N. Li. Recursive Partitioning and Summarization. ASIACCS 2012.
   Sec. 4.1 (EMD), Sec. 5.2 (KS and EMD of degree sequences).
"""

from __future__ import annotations

import numpy as np

from privpub.errors import PrivpubError
from privpub.metrics._checks import finite_vector, same_type
from privpub.registry import register_metric
from privpub.types import DegreeHistogram, DegreeSequence, Kind, Table
from privpub.validation import check_positive_int, check_rng

__all__ = [
    # registered metrics
    "emd",
    "emd_p2",
    "ks",
    "ks_sampled",
    "l1",
    "l1_counts",
    # array-level building blocks
    "histogram_distribution",
    "sequence_histogram",
    "wasserstein_samples",
    "wasserstein_histograms",
    "ks_samples",
    "ks_histograms",
    "l1_histograms",
]

_KINDS = (Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE, Kind.TABLE)


# --------------------------------------------------------------------------- building blocks
def histogram_distribution(counts, *, role: str = "histogram") -> np.ndarray:
    """Turn (possibly noisy) counts into a probability distribution.

    Negative counts are clipped at 0 and the result divided by its sum, which is how
    day2016 turns a noisy histogram ``h'`` into the published distribution
    ``d = h' / ||h'||_1`` (Algorithm 4, line 7; the post-processed counts are non-negative).

    Parameters
    ----------
    counts : array_like
        Counts per bin (index = degree), any real values.
    role : str
        Name used in error messages (``"truth"`` or ``"release"``).

    Returns
    -------
    numpy.ndarray
        Non-negative weights summing to 1.

    Raises
    ------
    PrivpubError
        If ``counts`` is empty, holds NaN or infinity, or has no positive count left after
        clipping (it then defines no distribution).
    """
    c = np.clip(finite_vector(counts, role, what="counts"), 0.0, None)
    total = c.sum()
    if not total > 0:
        raise PrivpubError(
            f"{role} histogram has no positive count (after clipping negative counts at 0), "
            "so it defines no distribution"
        )
    return c / total


def sequence_histogram(values, *, role: str = "sequence") -> np.ndarray:
    """Histogram (counts per integer degree) of a possibly noisy degree sequence.

    Each value is rounded to the nearest integer and negative values are set to 0 (a degree
    is a non-negative integer), then counted with :func:`numpy.bincount`.
    """
    v = finite_vector(values, role)
    return np.bincount(np.clip(np.rint(v), 0, None).astype(np.int64)).astype(float)


def _pad(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zero-pad the shorter of two 1-D arrays to the length of the longer one."""
    n = max(a.size, b.size)
    return np.pad(a, (0, n - a.size)), np.pad(b, (0, n - b.size))


def _check_p(p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise PrivpubError(f"p must be a number >= 1, got {p!r}")
    p = float(p)
    if not (1.0 <= p < np.inf):
        raise PrivpubError(f"p must be a finite number >= 1, got {p}")
    return p


def _wasserstein_quantiles(u, u_w, v, v_w, p: float) -> float:
    """p-Wasserstein distance of two weighted 1-D distributions via their quantile functions.

    ``W_p^p = int_0^1 |F^{-1}(t) - G^{-1}(t)|^p dt``; both quantile functions are step
    functions, constant between consecutive cumulative weights, so the integral is a finite sum.
    ``u`` and ``v`` must be sorted, weights non-negative and normalised.
    """
    cu = np.cumsum(u_w)
    cv = np.cumsum(v_w)
    cu[-1] = cv[-1] = 1.0  # guard against rounding in the normalisation
    t = np.union1d(cu, cv)
    t = t[t > 0]
    lo = np.concatenate([[0.0], t[:-1]])
    mid = 0.5 * (lo + t)
    qu = u[np.minimum(np.searchsorted(cu, mid, side="left"), u.size - 1)]
    qv = v[np.minimum(np.searchsorted(cv, mid, side="left"), v.size - 1)]
    return float(np.sum((t - lo) * np.abs(qu - qv) ** p) ** (1.0 / p))


def wasserstein_samples(u, v, *, p: float = 1) -> float:
    """p-Wasserstein (Mallows) distance between two samples of real numbers.

    For ``p = 1`` this is the Earth Mover's Distance, computed by
    :func:`scipy.stats.wasserstein_distance`. For ``p = 2`` and samples of equal size ``n``
    it equals qardaji2012's formula (Sec. 4.1)
    ``EMD(X, Y) = sqrt(1/n sum_i (X_i - Y_i)^2)`` with both samples sorted.

    Parameters
    ----------
    u, v : array_like
        The two samples (any sizes >= 1).
    p : float, default 1
        Order of the distance, >= 1.

    Returns
    -------
    float
        ``(int_0^1 |F_u^{-1}(t) - F_v^{-1}(t)|^p dt)^(1/p)``.
    """
    p = _check_p(p)
    u = finite_vector(u, "first sample")
    v = finite_vector(v, "second sample")
    if p == 1.0:
        from scipy.stats import wasserstein_distance

        return float(wasserstein_distance(u, v))
    u = np.sort(u)
    v = np.sort(v)
    return _wasserstein_quantiles(
        u, np.full(u.size, 1.0 / u.size), v, np.full(v.size, 1.0 / v.size), p
    )


def wasserstein_histograms(h, g, *, p: float = 1) -> float:
    """p-Wasserstein distance between two histograms over the integer support ``0, 1, 2, ...``.

    Both are normalised with :func:`histogram_distribution` (negative counts clipped at 0) and
    zero-padded to equal length. For ``p = 1`` this is ``sum_d |CDF_h(d) - CDF_g(d)|``
    (unit spacing), equal to :func:`scipy.stats.wasserstein_distance` with the bins as
    values and the counts as weights.
    """
    p = _check_p(p)
    a, b = _pad(histogram_distribution(h, role="first"), histogram_distribution(g, role="second"))
    if p == 1.0:
        return float(np.abs(np.cumsum(a - b)).sum())
    support = np.arange(a.size, dtype=float)
    return _wasserstein_quantiles(support, a, support, b, p)


def ks_samples(u, v) -> float:
    """Two-sample Kolmogorov-Smirnov distance ``max_x |F_u(x) - F_v(x)|``.

    ``F`` are the empirical CDFs ``F_X(x) = 1/n sum_i 1[X_i <= x]`` (qardaji2012 Sec. 5.2).
    Equal to the statistic of :func:`scipy.stats.ks_2samp`, without its p-value computation.
    """
    u = np.sort(finite_vector(u, "first sample"))
    v = np.sort(finite_vector(v, "second sample"))
    points = np.concatenate([u, v])
    cdf_u = np.searchsorted(u, points, side="right") / u.size
    cdf_v = np.searchsorted(v, points, side="right") / v.size
    return float(np.max(np.abs(cdf_u - cdf_v)))


def ks_histograms(h, g) -> float:
    """KS distance between two degree histograms, day2016 Sec. 2.1.

    ``KS(d, d') = max_i |CDF_d(i) - CDF_d'(i)|`` where ``d, d'`` are the distributions of
    :func:`histogram_distribution` (clip at 0, normalise), zero-padded to equal length.
    For integer count histograms this equals :func:`ks_samples` of the two expanded degree
    sequences.
    """
    a, b = _pad(histogram_distribution(h, role="first"), histogram_distribution(g, role="second"))
    return float(np.max(np.abs(np.cumsum(a) - np.cumsum(b))))


def l1_histograms(h, g, *, normalize: bool = True) -> float:
    """L1 distance ``sum_i |d_i - d'_i|`` between two histograms, zero-padded (day2016 Sec. 2.1).

    Parameters
    ----------
    h, g : array_like
        Counts per degree.
    normalize : bool, default True
        If True, compare the *distributions* (:func:`histogram_distribution`: clip at 0,
        divide by the total), as day2016 Sec. 2.1 and Fig. 3 do; the result lies in [0, 2].
        If False, compare the counts as given (no clipping), as day2016 Table 2 does for
        the histograms of projected graphs (values in numbers of nodes).
    """
    if normalize:
        a = histogram_distribution(h, role="first")
        b = histogram_distribution(g, role="second")
    else:
        a = finite_vector(h, "first", what="counts")
        b = finite_vector(g, "second", what="counts")
    a, b = _pad(a, b)
    return float(np.abs(a - b).sum())


# --------------------------------------------------------------------------- dispatch helpers
def _table_column(truth: Table, release: Table, column: str | None) -> tuple[np.ndarray, ...]:
    """The values of one numeric attribute in truth and release."""
    if column is None:
        numeric = [a.name for a in truth.schema.attributes if a.kind == "numeric"]
        if len(numeric) != 1:
            raise PrivpubError(
                "comparing tables as 1-D distributions needs one numeric attribute; the truth "
                f"schema has {len(numeric)} ({numeric}); pass column=<name>"
            )
        column = numeric[0]
    out = []
    for role, table in (("truth", truth), ("release", release)):
        if column not in table.data.columns:
            raise PrivpubError(f"{role} table has no column {column!r}")
        col = table.data[column]
        try:
            values = col.to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise PrivpubError(f"{role} column {column!r} is not numeric") from None
        out.append(finite_vector(values, role, what=f"column {column!r} values"))
    return tuple(out)


def _samples(truth, release, column, metric: str) -> tuple[np.ndarray, np.ndarray]:
    cls = same_type(truth, release, (DegreeSequence, Table), metric)
    if cls is Table:
        return _table_column(truth, release, column)
    return (
        finite_vector(truth.values, "truth", what="degree sequence"),
        finite_vector(release.values, "release", what="degree sequence"),
    )


def _histograms(truth, release, metric: str) -> tuple[np.ndarray, np.ndarray]:
    cls = same_type(truth, release, (DegreeHistogram, DegreeSequence), metric)
    if cls is DegreeHistogram:
        return truth.counts, release.counts
    return (
        sequence_histogram(truth.values, role="truth degree sequence"),
        sequence_histogram(release.values, role="release degree sequence"),
    )


def _no_mass(counts) -> bool:
    """True for a (finite) release with no positive count: it defines no distribution.

    day2016's mechanisms publish ``h' / ||h'||_1`` (Algorithm 4, line 7), undefined when
    every noisy count is <= 0; at small epsilon this happens (e.g. theta-CumulativeHistogram
    on Facebook at epsilon = 0.1, once in 30 runs). Such a release is scored as far as
    possible from any distribution (L1 = 2, KS = 1) rather than dropped, so averages over
    repetitions do not flatter the mechanism.
    """
    c = np.asarray(counts, dtype=float)
    return bool(c.size and np.isfinite(c).all() and not (c > 0).any())


def _label_errors(func, *args, **kwargs):
    """Call ``func``, renaming the generic 'first'/'second' of its errors to truth/release."""
    try:
        return func(*args, **kwargs)
    except PrivpubError as exc:
        msg = str(exc)
        for generic, role in (("first", "truth"), ("second", "release")):
            if msg.startswith(generic):
                msg = role + msg[len(generic) :]
        raise PrivpubError(msg) from None


# --------------------------------------------------------------------------- registered metrics
@register_metric("emd", kinds=_KINDS, higher_is_better=False, label="EMD")
def emd(truth, release, *, p: float = 1, column: str | None = None) -> float:
    """Earth Mover's Distance (1-Wasserstein) between the true and released distributions.

    qardaji2012 Sec. 4.1 measures how well RPS preserves the distribution of one attribute
    (Fig. 1) and of a degree sequence (Sec. 5.2, Fig. 5) by the EMD "between the original
    dataset and the anonymized counterpart". The paper names it the 1st Mallows / 1st
    Wasserstein distance, but the formula it prints,
    ``sqrt(1/n sum_i (X_i - Y_i)^2)``, is the 2nd Mallows distance (as its Sec. 5.2 also
    says of Hay et al.'s measure). ``emd`` computes the 1-Wasserstein distance the name
    denotes; ``p=2`` (or the registered metric ``emd_p2``) computes the printed formula.

    Parameters
    ----------
    truth, release : DegreeHistogram, DegreeSequence or Table
        Both of the same type. Histograms are distributions over degrees ``0, 1, ...``
        (negative noisy counts clipped at 0, then normalised; zero-padded); sequences and
        table columns are samples (their sizes may differ).
    p : float, default 1
        Order of the Wasserstein distance.
    column : str, optional
        For tables: the attribute to compare; defaults to the only numeric attribute of the
        truth's schema.

    Returns
    -------
    float
        The distance, in units of the data (degrees or attribute units); 0 iff equal.
    """
    if isinstance(truth, DegreeHistogram) or isinstance(release, DegreeHistogram):
        same_type(truth, release, (DegreeHistogram,), "emd")
        return _label_errors(wasserstein_histograms, truth.counts, release.counts, p=p)
    u, v = _samples(truth, release, column, "emd")
    return wasserstein_samples(u, v, p=p)


@register_metric("emd_p2", kinds=_KINDS, higher_is_better=False, label="EMD (Mallows p=2)")
def emd_p2(truth, release, *, column: str | None = None) -> float:
    """qardaji2012's EMD formula: the 2nd Mallows distance ``sqrt(1/n sum (X_i - Y_i)^2)``.

    qardaji2012 Sec. 4.1 defines ``EMD(X, Y) = sqrt(1/n sum_i (X_i - Y_i)^2)`` for two
    sorted datasets of equal size; for samples of unequal sizes (RPS releases a noisy number
    of points) this is generalised as the 2-Wasserstein distance between the empirical
    distributions. See :func:`emd` for parameters.
    """
    return emd(truth, release, p=2, column=column)


@register_metric("ks", kinds=_KINDS, higher_is_better=False, label="KS distance")
def ks(truth, release, *, column: str | None = None) -> float:
    """Kolmogorov-Smirnov distance between the true and released distributions.

    For degree histograms this is day2016 Sec. 2.1:
    ``KS(d, d') = max_i |CDF_d(i) - CDF_d'(i)|``, with the noisy release clipped at 0,
    normalised and zero-padded (:func:`ks_histograms`). For degree sequences and table
    columns it is the two-sample KS statistic ``max_x |F_X(x) - F_Y(x)|`` of the empirical
    CDFs (qardaji2012 Sec. 5.2; :func:`scipy.stats.ks_2samp`).

    day2016 Sec. 4.1 computes the KS of its figures on a degree *sequence generated from*
    the noisy distribution; that variant is :func:`ks_sampled`.

    Parameters
    ----------
    truth, release : DegreeHistogram, DegreeSequence or Table
        Both of the same type.
    column : str, optional
        For tables: the attribute to compare (default: the only numeric attribute).

    Returns
    -------
    float
        A value in [0, 1].
    """
    if isinstance(truth, DegreeHistogram) or isinstance(release, DegreeHistogram):
        same_type(truth, release, (DegreeHistogram,), "ks")
        if _no_mass(release.counts):
            return 1.0
        return _label_errors(ks_histograms, truth.counts, release.counts)
    u, v = _samples(truth, release, column, "ks")
    return ks_samples(u, v)


@register_metric(
    "ks_sampled",
    kinds=Kind.DEGREE_HISTOGRAM,
    higher_is_better=False,
    label="KS distance (sampled sequence)",
)
def ks_sampled(
    truth: DegreeHistogram,
    release: DegreeHistogram,
    *,
    n_samples: int | None = None,
    rng=None,
) -> float:
    """KS distance of a degree sequence sampled from the released distribution (day2016 Sec. 4.1).

    day2016 Sec. 4.1: "To evaluate the KS-distance on different approaches, we generate the
    degree sequence using the noisy degree distribution and then compare with the true
    degree sequence." The paper does not say how the sequence is generated; here it is
    ``n`` i.i.d. draws from the released distribution (clipped at 0, normalised), ``n`` the
    number of nodes of the true graph, drawn at once as a multinomial histogram. The KS
    distance between that sequence and the true one is then the day2016 Sec. 2.1 KS of the
    two histograms (identical to :func:`scipy.stats.ks_2samp` on the expanded sequences).
    Compared with :func:`ks`, it adds sampling noise of order ``1/sqrt(n)``.

    Parameters
    ----------
    truth, release : DegreeHistogram
        The exact histogram of the original graph and the released (noisy) one.
    n_samples : int, optional
        Length of the generated sequence; default: the number of nodes, ``sum(truth.counts)``.
    rng : numpy.random.Generator, int or None
        Randomness of the sampling (the runner passes the cell's generator).

    Returns
    -------
    float
        A value in [0, 1].
    """
    same_type(truth, release, (DegreeHistogram,), "ks_sampled")
    rng = check_rng(rng)
    true_counts = finite_vector(truth.counts, "truth", what="counts")
    if n_samples is None:
        n_samples = int(round(np.clip(true_counts, 0, None).sum()))
        if n_samples < 1:
            raise PrivpubError("truth histogram counts no node; pass n_samples=")
    n_samples = check_positive_int(n_samples, "n_samples")
    if _no_mass(release.counts):
        return 1.0
    dist = _label_errors(histogram_distribution, release.counts, role="release")
    sampled = rng.multinomial(n_samples, dist).astype(float)
    return _label_errors(ks_histograms, true_counts, sampled)


@register_metric(
    "l1",
    kinds=(Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE),
    higher_is_better=False,
    label="L1 error",
)
def l1(truth, release, *, normalize: bool = True) -> float:
    """L1 distance between the true and released degree distributions (day2016 Sec. 2.1).

    day2016 Sec. 2.1 measures "the L1 distance between the published distribution and the
    true distribution", ``||d - d'||_1 = sum_i |d_i - d'_i|``, where ``d_i`` is the
    *probability* that a random node has degree ``i`` (the problem is to release a
    distribution; its mechanisms return ``h' / ||h'||_1``), padding the shorter vector
    with zeros. So by default both are normalised: the noisy release is clipped at 0 and
    divided by its total, and the result lies in [0, 2]. day2016 Table 2 instead reports the
    L1 error of *count* histograms (values in the thousands); use ``normalize=False`` (or
    the registered metric ``l1_counts``) for that.

    Parameters
    ----------
    truth, release : DegreeHistogram or DegreeSequence
        Both of the same type; a sequence is first turned into its histogram
        (:func:`sequence_histogram`: round to the nearest integer, negatives to 0).
    normalize : bool, default True
        Compare distributions (True) or raw counts (False; no clipping).

    Returns
    -------
    float
        A release with no positive count scores 2, the largest L1 distance between two
        distributions (see :func:`_no_mass`).
    """
    h, g = _histograms(truth, release, "l1")
    if normalize and _no_mass(g):
        return 2.0
    return _label_errors(l1_histograms, h, g, normalize=normalize)


@register_metric(
    "l1_counts",
    kinds=(Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE),
    higher_is_better=False,
    label="L1 error (counts)",
)
def l1_counts(truth, release) -> float:
    """L1 distance between count histograms, not normalised (day2016 Table 2).

    ``sum_i |h_i - h'_i|`` over zero-padded counts; see :func:`l1` with ``normalize=False``.
    """
    return l1(truth, release, normalize=False)
