"""PrivBayes (zhang2017) for relational tables, run by DataSynthesizer's correlated attribute
mode: ``privbayes``, a synthetic table from a noisy Bayesian network.

The table is encoded on its public domain (:class:`privpub.algorithms.encoding.MarginalDomain`:
schema domains, ``n_bins`` equal-width bins of a numeric attribute's public range) and only
those codes reach DataSynthesizer's PrivBayes ([DS]; ``DataSynthesizer.lib.PrivBayes``): its
greedy network search (``greedy_bayes``: d - 1 exponential mechanisms scoring candidate
parent sets by mutual information, half of epsilon) and its noisy conditional distributions
(``construct_noisy_conditional_distributions``: Laplace noise on d - k count tables, the
other half). The synthetic codes are drawn from the noisy network with ``rng`` and decoded
to the input's schema. ``DataDescriber`` is not used: it reads the domains, types, keys and
ranges from the data and spends an unaccounted epsilon on 1-way marginals. Four names of
``DataSynthesizer.lib.PrivBayes`` are swapped for the call (:func:`_patched`) so that the
public domain is used throughout. What is read from the data, the accounting and the
neighbour relation the calibration assumes (one record replaced, n public; hence the
caveat): docs/design.md, "zhang2017: PrivBayes (DataSynthesizer)".

References
----------
.. [ZCPSX17] J. Zhang, G. Cormode, C. M. Procopiuc, D. Srivastava, X. Xiao. PrivBayes:
   Private Data Release via Bayesian Networks. ACM TODS 42(4), 2017 (SIGMOD 2014): Sec 3
   (Algorithm 1, noisy conditionals), Sec 4 (GreedyBayes, sensitivity of mutual
   information), theta-usefulness for the degree k.
.. [DS] H. Ping, J. Stoyanovich, B. Howe. DataSynthesizer: Privacy-Preserving Synthetic
   Datasets. SSDBM 2017. https://github.com/DataResponsibly/DataSynthesizer (0.1.13).
"""

from __future__ import annotations

import contextlib
import io
import random
import threading
import warnings

import numpy as np
import pandas as pd

from privpub.algorithms.encoding import MarginalDomain
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.registry import RECORD_DP, register_mechanism
from privpub.types import Kind, Release, Table
from privpub.validation import check_epsilon, check_positive_int, check_rng

__all__ = ["CAVEAT", "SYNTH_INSTALL", "THETA", "default_degree", "privbayes"]

#: The one-line fix when DataSynthesizer is missing (pyproject's ``synth`` extra).
SYNTH_INSTALL = 'pip install "privpub[synth]"'

#: theta-usefulness target of the default degree (zhang2017 recommends theta = 4).
THETA = 4.0

#: Stored with every result row.
CAVEAT = (
    "Bounded DP, PrivBayes' own reading: neighbours replace one record and the row count n "
    "is public (the release has exactly n rows, the exponential mechanism's "
    "mutual-information sensitivity and the default degree read n); not DP when a record "
    "is added or removed. DataSynthesizer's Laplace noise on the count tables covers one "
    "added or removed record, half the paper's; privpub hands it half the conditionals' "
    "budget so that the noise is the paper's and the release epsilon-DP under replace-one"
)

#: Upper end (exclusive) of the seed handed to numpy's and Python's global generators.
_SEED_HIGH = 2**32

#: DataSynthesizer draws from numpy's and Python's global generators and reads swapped
#: module names: one release at a time in a process.
_LOCK = threading.Lock()


def _privbayes_module():
    """``DataSynthesizer.lib.PrivBayes``, or a one-line error naming the install."""
    try:
        from DataSynthesizer.lib import PrivBayes
    except ImportError as exc:
        raise NotApplicableError(
            f"privbayes needs DataSynthesizer, which cannot be imported ({exc}): "
            f"{SYNTH_INSTALL}"
        ) from exc
    return PrivBayes


class _SerialPool:
    """Stand-in for ``multiprocessing.Pool`` in ``greedy_bayes``: the same ``map``, run in
    this process (a process pool per greedy step cannot start inside a daemonic worker and
    oversubscribes shared cores; the scores are deterministic, so the result is the same)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, func, tasks):
        return [func(t) for t in tasks]


def _mutual_information(codes: dict[str, np.ndarray], sizes: dict[str, int]):
    """DataSynthesizer's ``mutual_information(labels_x, labels_y)`` (scikit-learn's
    ``mutual_info_score`` of the child and the parents' joint value, natural log) computed
    from the integer codes of the named columns by one ``bincount``: the same empirical
    mutual information (up to float rounding; a test compares them) without scikit-learn's
    per-call validation and string sorting, which made the greedy search of adult take
    tens of minutes."""

    def mutual_information(labels_x: pd.Series, labels_y: pd.DataFrame) -> float:
        parents = list(labels_y.columns)
        dims = [int(np.prod([sizes[p] for p in parents])), sizes[labels_x.name]]
        joint_parent = np.ravel_multi_index([codes[p] for p in parents],
                                            [sizes[p] for p in parents])
        table = np.bincount(joint_parent * dims[1] + codes[labels_x.name],
                            minlength=dims[0] * dims[1]).reshape(dims).astype(float)
        n = table.sum()
        p_parent, p_child = table.sum(axis=1) / n, table.sum(axis=0) / n
        nz = table > 0
        p_joint = table[nz] / n
        outer = np.outer(p_parent, p_child)[nz]
        return float(max(np.sum(p_joint * (np.log(p_joint) - np.log(outer))), 0.0))

    return mutual_information


@contextlib.contextmanager
def _patched(pb, encoded: pd.DataFrame, sizes: list[int]):
    """Swap four names of ``DataSynthesizer.lib.PrivBayes`` for the call.

    ``calculate_sensitivity`` gets each attribute's binary flag from its public domain size
    (``greedy_bayes`` reads it from the values present); ``get_noisy_distribution_of_attributes``
    spans the public domain (the original enumerates ``0..max`` of the codes present) with
    the original's noise scale, draws and clipping; ``Pool`` and ``mutual_information`` as
    :class:`_SerialPool` and :func:`_mutual_information` say.
    """
    size_of = dict(zip(encoded.columns, sizes, strict=True))
    codes = {a: encoded[a].to_numpy(dtype=np.int64) for a in encoded.columns}
    is_binary = {a: s <= 2 for a, s in size_of.items()}
    original_sensitivity = pb.calculate_sensitivity

    def calculate_sensitivity(num_tuples, child, parents, _attr_to_is_binary):
        return original_sensitivity(num_tuples, child, parents, is_binary)

    def get_noisy_distribution_of_attributes(attributes, encoded_dataset, epsilon=0.1):
        dims = [size_of[a] for a in attributes]
        flat = np.ravel_multi_index(
            [encoded_dataset[a].to_numpy(dtype=np.int64) for a in attributes], dims)
        grid = np.indices(dims).reshape(len(dims), -1).T  # itertools.product's order
        stats = pd.DataFrame(grid, columns=list(attributes))
        stats["count"] = np.bincount(flat, minlength=grid.shape[0]).astype(float)
        if epsilon:
            num_tuples, num_attributes = encoded_dataset.shape
            scale = pb.laplace_noise_parameter(len(attributes) - 1, num_attributes,
                                               num_tuples, epsilon)
            stats["count"] += np.random.laplace(0, scale=scale, size=stats.index.size)  # noqa: NPY002
            stats.loc[stats["count"] < 0, "count"] = 0
        return stats

    swaps = {"calculate_sensitivity": calculate_sensitivity,
             "get_noisy_distribution_of_attributes": get_noisy_distribution_of_attributes,
             "Pool": _SerialPool, "mutual_information": _mutual_information(codes, size_of)}
    saved = {name: getattr(pb, name) for name in swaps}
    try:
        for name, value in swaps.items():
            setattr(pb, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(pb, name, value)


@contextlib.contextmanager
def _global_generators(seed: int):
    """Seed numpy's and Python's global generators with ``seed``; restore both after."""
    np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002
    try:
        np.random.seed(seed)  # noqa: NPY002
        random.seed(seed)
        yield
    finally:
        np.random.set_state(np_state)  # noqa: NPY002
        random.setstate(py_state)


def default_degree(sizes: list[int], n_rows: int, epsilon: float) -> int:
    """The largest degree k whose noisy (k+1)-way tables are theta-useful, theta = 4
    (zhang2017's Lemma 3: a binary table is useful when ``n eps / ((d - k) 2^(k+3)) >=
    theta``, ``eps`` the conditionals' budget at DataSynthesizer's count scale; read for a
    general domain as ``n eps / ((d - k) 4 C) >= theta`` with ``C`` the cells of the largest
    (k+1)-way table, the product of the k + 1 largest domain sizes, which is the binary
    formula when every size is 2); 1 when no k is useful. It reads n, public under the
    mechanism's bounded DP. DataSynthesizer's ``calculate_k`` ignores domain sizes (on adult
    it picks 3, tables of 32 x 32 x 41 x 32 cells) and returns the ceiling of its root, a k
    that is not useful: docs/design.md."""
    d = len(sizes)
    largest = np.sort(np.asarray(sizes, dtype=float))[::-1]
    best = 1
    for k in range(1, d):
        cells = float(np.prod(largest[:k + 1]))
        if n_rows * epsilon / ((d - k) * 4.0 * cells) >= THETA:
            best = k
        else:
            break
    return best


def _cpt(dists: dict, parent_sizes: list[int], child_size: int) -> np.ndarray:
    """A child's conditional table ``(prod(parent_sizes), child_size)`` from
    ``construct_noisy_conditional_distributions``' dict, whose keys come in the sorted order
    of the parents' values (a pandas groupby over the full public domain)."""
    table = np.asarray(list(dists.values()), dtype=float)
    if table.shape != (int(np.prod(parent_sizes)), child_size):
        raise PrivpubError(f"unexpected conditional table of shape {table.shape}")
    return table


def _sample(bn: list, conditionals: dict, names: list[str], sizes: list[int], n: int,
            rng: np.random.Generator) -> np.ndarray:
    """``n`` code rows drawn ancestrally from the noisy network (post-processing; what
    ``DataGenerator.generate_encoded_dataset`` does, vectorised and from ``rng``)."""
    col = {a: j for j, a in enumerate(names)}
    codes = np.zeros((n, len(names)), dtype=np.int64)

    def draw(probs: np.ndarray) -> np.ndarray:  # one categorical draw per row of probs
        cdf = np.cumsum(probs, axis=1)
        u = rng.random(probs.shape[0]) * cdf[:, -1]
        return np.minimum((u[:, None] >= cdf).sum(axis=1), probs.shape[1] - 1)

    root = bn[0][1][0]
    root_dist = np.asarray(conditionals[root], dtype=float)
    codes[:, col[root]] = draw(np.broadcast_to(root_dist, (n, root_dist.size)))
    for child, parents in bn:
        p_sizes = [sizes[col[p]] for p in parents]
        cpt = _cpt(conditionals[child], p_sizes, sizes[col[child]])
        flat = np.ravel_multi_index([codes[:, col[p]] for p in parents], p_sizes)
        codes[:, col[child]] = draw(cpt[flat])
    return codes


@register_mechanism(
    "privbayes",
    input_kind=Kind.TABLE,
    output_kind=Kind.TABLE,
    privacy=RECORD_DP,
    paper="zhang2017",
    source="Sec 3-4 (Algorithm 1 with GreedyBayes), as DataSynthesizer 0.1.13 runs it",
    caveat=CAVEAT,
    caveat_summary="bounded DP: one record replaced, the row count public (the paper's "
                   "reading); releases n rows",
    neighbourhood="record_replace",
    blind_spot="the caveat names the neighbours the claim does not cover (a record added or "
               "removed); the audit tests the ones it claims (one record replaced)",
    audit={"cost_ms": 25},
)
def privbayes(
    table: Table,
    *,
    epsilon: float,
    degree: int | None = None,
    n_bins: int = 32,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """PrivBayes (zhang2017 Sec 3-4) by DataSynthesizer's correlated attribute mode: a
    noisy degree-k Bayesian network of the public codes, sampled into n synthetic rows.

    Parameters
    ----------
    table : Table
        Every attribute needs a public domain (numeric: ``(low, high)``).
    epsilon : float
        Half for the network (d - 1 exponential mechanisms, epsilon/(2(d-1)) each), half
        for the d - k noisy count tables (Laplace, scale 4(d - k)/epsilon: L1 sensitivity
        2 per table under replace-one), as DataSynthesizer splits it (the paper: a share
        beta for the network). Bounded DP: neighbours replace one record (the caveat).
    degree : int or None, default None
        Maximum number of parents k. None: :func:`default_degree` (theta-usefulness,
        theta = 4, over the public domain sizes; it reads n). At least 1
        (DataSynthesizer reads k = 0 as "choose k").
    n_bins : int, default 32
        Equal-width bins of a numeric attribute's public range (fewer for a small integer
        range: :class:`~privpub.algorithms.encoding.MarginalDomain`).
    rng : numpy.random.Generator
        Seeds DataSynthesizer's global generators (restored afterwards) and draws the rows.
    ledger : PrivacyLedger, optional
        Receives the two spends.

    Returns
    -------
    Release
        ``value``: a Table with the input's schema and n rows. ``info``: ``degree`` (k used)
        and ``network`` (each attribute's parents, in the order they were added).

    Raises
    ------
    PrivpubError
        A bad parameter, fewer than two attributes, or an attribute without a public
        domain; :class:`~privpub.errors.NotApplicableError` when DataSynthesizer is missing.
    """
    epsilon = check_epsilon(epsilon)
    if degree is not None:
        degree = check_positive_int(degree, "degree")
    n_bins = check_positive_int(n_bins, "n_bins")
    rng = check_rng(rng)
    if not isinstance(table, Table):
        raise PrivpubError(f"privbayes needs a Table, got {type(table).__name__}")
    domain = MarginalDomain.from_table(table, n_bins)
    names, sizes = list(domain.names), list(domain.sizes)
    if len(names) < 2:
        raise PrivpubError("privbayes needs a table with at least two attributes")
    if table.n_rows < 2:
        raise PrivpubError("privbayes needs a table with at least two rows (the "
                           "sensitivity of mutual information divides by n - 1)")
    pb = _privbayes_module()
    if degree is not None:   # the (k+1)-way count tables are held in memory
        domain.check_marginals(degree + 1, 2e7, "privbayes")
    ledger = ensure_ledger(ledger, epsilon)
    eps_network, eps_conditionals = epsilon / 2, epsilon / 2  # DataDescriber's split
    encoded = pd.DataFrame(domain.encode(table), columns=names)
    seed = int(rng.integers(_SEED_HIGH))
    # errstate: at a large epsilon the exponential mechanism's weights overflow to inf
    # (DataSynthesizer then draws uniformly among the infinite ones; docs/design.md)
    with _LOCK, _patched(pb, encoded, sizes), _global_generators(seed), \
            contextlib.redirect_stdout(io.StringIO()), np.errstate(over="ignore"), \
            warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The copy keyword is deprecated")
        k = degree if degree is not None else default_degree(
            sizes, table.n_rows, eps_conditionals / 2)
        ledger.spend(eps_network, label=f"network: {len(names) - 1} exponential mechanisms "
                     "over parent sets (mutual information)", primitive="exponential")
        bn = pb.greedy_bayes(encoded, k, eps_network, seed=seed)
        # a replaced record moves each of the d - k count tables by 2 in L1: at
        # DataSynthesizer's scale (d - k)/eps_arg that costs 2 eps_arg, so eps_arg is half
        # the conditionals' budget (the paper's Algorithm 1 noise, 4(d - k)/(n eps) on
        # probabilities at the paper's even split)
        ledger.spend(eps_conditionals, label=f"conditional distributions: Laplace on the "
                     f"{len(names) - k} count tables", sensitivity=2.0 * (len(names) - k),
                     primitive="laplace")
        conditionals = pb.construct_noisy_conditional_distributions(
            bn, encoded, eps_conditionals / 2)
    codes = _sample(bn, conditionals, names, sizes, table.n_rows, rng)
    info = {"degree": k, "network": [(child, list(parents)) for child, parents in bn]}
    return Release(domain.decode(codes, rng), info)

