"""AIM and MST: marginal-based synthetic tables on private-pgm (``mbi``), their authors'
library, under approximate record-DP (:data:`privpub.registry.RECORD_APPROX_DP`).

Both select marginals, measure them with Gaussian noise and let private-pgm's mirror
descent fit a graphical model to the noisy measurements, whose synthetic data is the
release. The selection loops follow the authors' mechanism scripts (private-pgm's
``mechanisms/aim.py`` and ``mechanisms/mst.py``) line by line on mbi 2's estimator API;
the estimation, the junction-tree size and the synthetic data are mbi's own. The table is
discretised by its public schema (:class:`privpub.algorithms.encoding.MarginalDomain`).

Privacy. Neighbours add or remove one record (the papers' unbounded DP): a marginal's
count vector then has L1 and L2 sensitivity 1, a quality that is a weighted L1 error has
sensitivity its weight. Both mechanisms are ``rho``-zCDP [BS16], ``rho`` bought from the
claimed ``(epsilon, delta)`` by Canonne-Kamath-Steinke's conversion
(:class:`privpub.ledger.ZCDPBudget`, the authors' ``cdp2adp.cdp_rho``); every Gaussian
measurement and exponential-mechanism selection is a part of ``rho`` on the ledger. The
release is therefore ``(epsilon, delta)``-DP, not pure epsilon-DP: it is ranked in its own
notion's table. Rationale and readings: docs/design.md ("AIM and MST").

References
----------
.. [MMSM22] R. McKenna, B. Mullins, D. Sheldon, G. Miklau. AIM: An Adaptive and Iterative
   Mechanism for Differentially Private Synthetic Data. PVLDB 15(11), 2022. Alg. 1 (AIM),
   Sec. 4 (initialisation, budget annealing, model-size filter, workload weights).
.. [MMS21] R. McKenna, G. Miklau, D. Sheldon. Winning the NIST Contest: A scalable and
   general approach to differentially private synthetic data. JPC 11(3), 2021. Sec. 4
   (MST: measure 1-way marginals, select a maximum spanning tree of 2-way marginals by the
   exponential mechanism, measure them, generate with Private-PGM).
.. [BS16] M. Bun, T. Steinke. Concentrated Differential Privacy. TCC 2016.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import sys
import warnings

import numpy as np

from privpub.algorithms.encoding import MarginalDomain
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger, ZCDPBudget, ensure_ledger
from privpub.noise import exponential_mechanism, gaussian_noise
from privpub.registry import RECORD_APPROX_DP, register_mechanism
from privpub.types import Kind, Release, Table
from privpub.validation import check_epsilon, check_rng

__all__ = ["aim", "mst", "SYNTH_EXTRA", "global_numpy_seed", "import_mbi", "model_marginals"]

#: What a user installs for the marginal-based synthesizers.
SYNTH_EXTRA = 'pip install "privpub[synth]"'

#: The most cells a marginal that a synthesizer holds in memory may have (8 bytes each).
MAX_MARGINAL_CELLS = 2e7

#: What AIM's and MST's registrations say of their (epsilon, delta) claim.
_CAVEAT = ("(epsilon, delta)-DP through rho-zCDP (delta = the delta parameter, 1e-9 by "
           "default): not pure epsilon-DP, ranked in its own table")
_CAVEAT_SUMMARY = "(epsilon, delta)-DP via zCDP, delta 1e-9: its own table"
_BLIND_SPOT = ("the caveat is delta = 1e-9, an excess of event probability far below what "
               "the audit's few hundred runs resolve: the audit tests epsilon alone")

#: The papers' delta ([MMSM22] Sec. 6.1 and [MMS21]: delta = 1e-9).
DEFAULT_DELTA = 1e-9


def import_mbi():
    """private-pgm's ``mbi`` with JAX in float64 (mbi warns that float32 stalls its
    estimation on large tables). A missing library is one line naming the extra."""
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mbi
        # JAX's and absl's log handlers keep the sys.stderr of the moment they were
        # imported; under a capture (pytest, an in-process run) that stream is closed
        # later, and Hydra's logging setup, which flushes every handler, then failed on it
        for ref in list(logging._handlerList):
            handler = ref()
            if (type(handler) in (logging.StreamHandler, *_absl_handlers())
                    and handler.stream is sys.stderr and sys.stderr is not sys.__stderr__):
                handler.setStream(sys.__stderr__)
    except ImportError as exc:
        raise NotApplicableError(
            f"AIM and MST need private-pgm (mbi) and JAX, which cannot be imported ({exc}); "
            f"install them with {SYNTH_EXTRA}"
        ) from exc
    return mbi


def _absl_handlers() -> tuple:
    try:
        from absl.logging import PythonHandler
    except ImportError:
        return ()
    return (PythonHandler,)


@contextlib.contextmanager
def global_numpy_seed(rng: np.random.Generator):
    """Seed numpy's global random state from ``rng`` for a library that draws from it
    (mbi's synthetic data and decompression), restoring the state afterwards, so that a
    release depends on the mechanism's ``rng`` alone."""
    state = np.random.get_state()  # noqa: NPY002 - the library's global stream
    np.random.seed(int(rng.integers(2**32, dtype=np.uint64)))  # noqa: NPY002
    try:
        yield
    finally:
        np.random.set_state(state)  # noqa: NPY002


#: Releases between two clearings of JAX's compiled programs (:func:`_forget_compiled_programs`).
_CLEAR_EVERY = 200
_releases = 0


def _forget_compiled_programs() -> None:
    """Every ``_CLEAR_EVERY`` releases, drop the programs JAX compiled (one per set of
    measured cliques, kept for the process's life): an audit's process, which makes
    hundreds of releases, grew past 4 GB without this; clearing after every release would
    make each release compile everything anew."""
    global _releases
    _releases += 1
    if _releases % _CLEAR_EVERY == 0:
        import jax

        jax.clear_caches()


def _check_delta(delta) -> float:
    try:
        delta = float(delta)
    except (TypeError, ValueError):
        raise PrivpubError(f"delta must be a number in (0, 1), got {delta!r}") from None
    if not 0 < delta < 1:
        raise PrivpubError(f"delta must be in (0, 1), got {delta!r}")
    return delta


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise PrivpubError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class _Problem:
    """The table as mbi sees it: the public domain, the data as codes, the budget."""

    def __init__(self, table: Table, epsilon, delta, n_bins, rng, ledger):
        if not isinstance(table, Table):
            raise PrivpubError(f"expected a Table, got {type(table).__name__}")
        self.epsilon = check_epsilon(epsilon)
        self.rng = check_rng(rng)
        self.mbi = import_mbi()
        self.encoding = MarginalDomain.from_table(table, _check_positive_int(n_bins, "n_bins"))
        codes = self.encoding.encode(table)
        names = self.encoding.names
        self.domain = self.mbi.Domain(names, self.encoding.sizes)
        self.data = self.mbi.Dataset({a: codes[:, j] for j, a in enumerate(names)}, self.domain)
        self.ledger = ensure_ledger(ledger, self.epsilon)
        self.budget = ZCDPBudget(self.ledger, _check_delta(delta))

    def marginal(self, clique) -> np.ndarray:
        return np.asarray(self.data.project(clique).datavector(), dtype=float)

    def measure(self, clique, sigma: float, label: str):
        """The marginal on ``clique`` plus N(0, sigma^2) per cell, its rho on the ledger."""
        x = self.marginal(clique)
        y = x + gaussian_noise(sigma=sigma, rng=self.rng, size=x.size)
        self.budget.spend(self.budget.gaussian_rho(sigma), label=f"{label} {clique}",
                          sensitivity=1.0, primitive="gaussian")
        return self.mbi.LinearMeasurement(y, tuple(clique), stddev=sigma)

    def select(self, quality: dict, epsilon: float, sensitivity: float, label: str):
        """The exponential mechanism over ``quality``'s keys, its eps^2/8 on the ledger."""
        keys = list(quality)
        i = exponential_mechanism(np.array([quality[k] for k in keys]), epsilon=epsilon,
                                  sensitivity=sensitivity, rng=self.rng)
        self.budget.spend(self.budget.exponential_rho(epsilon), label=label,
                          sensitivity=sensitivity, primitive="exponential mechanism")
        return keys[i]

    def estimate(self, measurements, iters: int, warm_start=None):
        est = self.mbi.estimation.MirrorDescent()
        return est.estimate(self.domain, list(measurements), iters=iters, warm_start=warm_start)

    def release(self, model, mapping=None) -> Release:
        with global_numpy_seed(self.rng):
            synth = model.synthetic_data(rows=None)
            if mapping:
                synth = synth.decompress(mapping)
        _forget_compiled_programs()
        names = self.encoding.names
        codes = np.column_stack([np.asarray(synth.data[a], dtype=np.int64) for a in names])
        return Release(self.encoding.decode(codes, self.rng),
                       {"rho": self.budget.rho, "delta": self.budget.delta,
                        "rows": int(codes.shape[0])})


def model_marginals(model, cliques) -> dict:
    """Each clique's marginal (counts, flattened in the clique's order) under a fitted mbi
    model, by contracting the model's potentials in numpy: ``P(r) ∝ sum_{x \\ r}
    prod_C exp(theta_C(x_C))``, scaled to the model's total. The same numbers as mbi's
    ``model.project(r)`` (tested to 1e-9), whose variable elimination JAX compiles anew for
    every clique and every new model: AIM scores hundreds of candidates a round, and those
    compilations were nearly all of its time. Only the factors of the connected parts of
    the model that ``r`` touches enter a contraction (the others sum to constants), and
    parts are independent, so their marginals multiply. Each factor is shifted by its
    maximum before ``exp`` (a constant, removed by the scaling)."""
    pots = model.potentials
    attrs = list(pots.domain.attributes)
    index = {a: i for i, a in enumerate(attrs)}
    part = {a: a for a in attrs}

    def find(a):
        while part[a] != a:
            part[a] = part[part[a]]
            a = part[a]
        return a

    for cl in pots.cliques:
        for a in cl[1:]:
            part[find(a)] = find(cl[0])
    factors: dict = {}
    for cl in pots.cliques:
        theta = np.asarray(pots[cl].values, dtype=float)
        factors.setdefault(find(cl[0]), []).extend(
            [np.exp(theta - theta.max()), [index[a] for a in pots[cl].domain.attributes]])
    memo: dict = {}

    def within(root, keep: tuple) -> np.ndarray:   # a part's marginal over ``keep``
        if (root, keep) not in memo:
            ops = factors.get(root) or [np.ones(pots.domain[root]), [index[root]]]
            x = np.einsum(*ops, [index[a] for a in keep], optimize="greedy")
            memo[root, keep] = x / x.sum()
        return memo[root, keep]

    total = float(model.total)
    out = {}
    for cl in cliques:
        groups: dict = {}
        for a in cl:
            groups.setdefault(find(a), []).append(a)
        ops = []
        for root, keep in groups.items():
            ops += [within(root, tuple(keep)), [index[a] for a in keep]]
        x = np.einsum(*ops, [index[a] for a in cl]) if len(groups) > 1 else ops[0]
        out[cl] = (x * (total / x.sum())).ravel()
    return out


# --------------------------------------------------------------------------- AIM
def _downward_closure(cliques) -> list:
    out = set()
    for cl in cliques:
        for r in range(1, len(cl) + 1):
            out.update(itertools.combinations(cl, r))
    return sorted(out, key=len)


def _workload_candidates(workload) -> dict:
    """[MMSM22] Sec. 4 "workload-aware selection": every clique of the workload's downward
    closure, weighted by ``sum_w c_w |r ∩ w|`` (the authors' ``compile_workload``)."""
    return {cl: float(sum(len(set(cl) & set(w)) for w in workload))
            for cl in _downward_closure(workload)}


@register_mechanism(
    "aim",
    input_kind=Kind.TABLE,
    output_kind=Kind.TABLE,
    privacy=RECORD_APPROX_DP,
    paper="mckenna2022",
    source="Alg. 1; the authors' private-pgm mechanisms/aim.py on mbi 2",
    caveat=_CAVEAT,
    caveat_summary=_CAVEAT_SUMMARY,
    blind_spot=_BLIND_SPOT,
    # the audit's tiny tables (4 attributes) with T = 8 rounds and 30 iterations (neither
    # touches the accounting): ~0.7 s a release, JAX compiling each new clique set
    audit={"configurations": [{"max_iters": 30, "max_model_size": 0.1, "rounds": 8}],
           "cost_ms": 700},
)
def aim(
    table: Table,
    *,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    degree: int = 3,
    max_cells: int = 10_000,
    max_model_size: float = 80.0,
    max_iters: int = 1000,
    rounds: int | None = None,
    n_bins: int = 32,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """AIM [MMSM22, Alg. 1]: workload-adaptive select-measure-generate on private-pgm.

    Parameters
    ----------
    table : Table
        The input, discretised by its public schema (``n_bins`` bins per numeric
        attribute).
    epsilon, delta : float
        The ``(epsilon, delta)`` claim; ``rho`` is the largest zCDP budget that implies it.
    degree, max_cells : int
        The workload: every ``degree``-way marginal with at most ``max_cells`` cells, weight
        1 (the authors' script; [MMSM22] Sec. 6.1 "all 3-way marginals").
    max_model_size : float
        Megabytes the junction tree may reach ([MMSM22] Sec. 4, 80 in the paper); a
        candidate that would exceed ``max_model_size * rho_used / rho`` is filtered out.
    max_iters : int
        Mirror-descent iterations per estimation (1000 in the authors' script).
    rounds : int, optional
        The round count ``T`` that sets the initial noise (default ``16 d``, d attributes).
    n_bins : int
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional
        Receives every part of ``rho`` as its share of ``epsilon``.

    Returns
    -------
    Release
        ``value``: the synthetic table (the input's schema, its noisy row count);
        ``info``: ``rho``, ``delta``, ``rows``, ``rounds`` (selections made), ``cliques``.

    Notes
    -----
    As the authors' code: the 1-way marginals are measured first with ``sigma =
    sqrt(T / (2 * 0.9 rho))`` ([MMSM22] Sec. 4 "initialisation"); each round selects by
    the exponential mechanism with ``eps = sqrt(8 * 0.1 * rho / T)`` on the quality
    ``c_r (||M_r(D) - M_r(p)||_1 - sqrt(2/pi) sigma n_r)`` (sensitivity ``max c_r``),
    measures the selected marginal, re-estimates warm-started, halves sigma (and doubles
    eps) when the new measurement moved the model's marginal by less than its expected
    noise ``sqrt(2/pi) sigma n_r`` ("budget annealing"), and spends what is left in one
    last round when less than two rounds' worth remains.
    """
    p = _Problem(table, epsilon, delta, n_bins, rng, ledger)
    degree = _check_positive_int(degree, "degree")
    max_cells = _check_positive_int(max_cells, "max_cells")
    max_iters = _check_positive_int(max_iters, "max_iters")
    if not max_model_size > 0:
        raise PrivpubError(f"max_model_size must be > 0, got {max_model_size!r}")
    names = p.encoding.names
    if degree > len(names):
        raise NotApplicableError(f"degree {degree} exceeds the {len(names)} attributes")
    p.encoding.check_marginals(1, MAX_MARGINAL_CELLS, "aim")
    workload = [cl for cl in itertools.combinations(names, degree)
                if p.domain.size(cl) <= max_cells]
    if not workload:
        raise NotApplicableError(f"no {degree}-way marginal has at most {max_cells} cells")
    rho = p.budget.rho
    rounds = _check_positive_int(rounds, "rounds") if rounds is not None else 16 * len(names)
    if rounds <= 0.9 * len(names):   # the 1-way marginals alone cost 0.9 rho d / rounds
        raise PrivpubError(f"rounds must exceed 0.9 x the {len(names)} attributes (the 1-way "
                           f"marginals cost 0.9 rho d / rounds), got {rounds}")
    candidates = _workload_candidates(workload)
    answers = {cl: p.marginal(cl) for cl in candidates}
    jt = p.mbi.junction_tree

    sigma = np.sqrt(rounds / (2 * 0.9 * rho))
    eps = np.sqrt(8 * 0.1 * rho / rounds)
    measurements = [p.measure((a,), sigma, "1-way marginal") for a in names]
    model = p.estimate(measurements, max_iters)
    selected = []
    terminate = False
    while not terminate:
        remaining = p.budget.remaining
        if remaining < 2 * (0.5 / sigma**2 + eps**2 / 8):
            sigma = np.sqrt(1 / (2 * 0.9 * remaining))
            eps = np.sqrt(8 * 0.1 * remaining)
            terminate = True
        used_after = p.budget.used + eps**2 / 8 + 0.5 / sigma**2
        size_limit = max_model_size * used_after / rho
        free = set(_downward_closure(model.cliques))
        small = {cl: w for cl, w in candidates.items()
                 if cl in free or jt.hypothetical_model_size(p.domain, [*model.cliques, cl])
                 <= size_limit}
        estimates = model_marginals(model, list(small))
        errors = {}
        for cl, w in small.items():
            bias = np.sqrt(2 / np.pi) * sigma * p.domain.size(cl)
            errors[cl] = w * (np.abs(answers[cl] - estimates[cl]).sum() - bias)
        cl = p.select(errors, eps, max(small.values()), "select marginal")
        selected.append(cl)
        n = p.domain.size(cl)
        before = estimates[cl]
        measurements.append(p.measure(cl, sigma, "marginal"))
        model = p.estimate(measurements, max_iters, warm_start=model)
        after = model_marginals(model, [cl])[cl]
        if not terminate and np.abs(after - before).sum() <= sigma * np.sqrt(2 / np.pi) * n:
            sigma /= 2
            eps *= 2
    model = p.estimate(measurements, max_iters, warm_start=model)   # the authors' last fit
    out = p.release(model)
    out.info.update(rounds=len(selected), cliques=[list(c) for c in selected])
    return out


# --------------------------------------------------------------------------- MST
def _compress_domain(p: _Problem, oneway: list):
    """[MMS21] Sec. 4 (the authors' ``compress_domain``): the values of an attribute whose
    noisy 1-way count is below ``3 sigma`` are merged into one value; the 1-way measurements
    are re-expressed on the merged domain (mbi's ``LinearMeasurement.compress``)."""
    mapping = {}
    for m in oneway:
        a = m.clique[0]
        support = np.asarray(m.noisy_measurement) >= 3 * m.stddev
        if support.all():
            continue
        codes = np.full(support.size, int(support.sum()))
        codes[support] = np.arange(int(support.sum()))
        mapping[a] = codes
    if not mapping:
        return p.data, p.domain, oneway, None
    data = p.data.compress(mapping)
    return data, data.domain, [m.compress(mapping, p.domain) for m in oneway], mapping


@register_mechanism(
    "mst",
    input_kind=Kind.TABLE,
    output_kind=Kind.TABLE,
    privacy=RECORD_APPROX_DP,
    paper="mckenna2021",
    source="Sec. 4; the authors' private-pgm mechanisms/mst.py on mbi 2",
    caveat=_CAVEAT,
    caveat_summary=_CAVEAT_SUMMARY,
    blind_spot=_BLIND_SPOT,
    audit={"configurations": [{"max_iters": 30}], "cost_ms": 700},   # ~0.7 s a tiny release
)
def mst(
    table: Table,
    *,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    max_iters: int = 10_000,
    n_bins: int = 32,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """MST [MMS21, Sec. 4]: 1-way marginals, a maximum spanning tree of 2-way marginals
    chosen privately, private-pgm's model of both.

    Parameters
    ----------
    table : Table
    epsilon, delta : float
        The ``(epsilon, delta)`` claim (``rho`` by :func:`privpub.ledger.zcdp_rho`).
    max_iters : int
        Mirror-descent iterations of the final estimation (10,000 in the authors' script;
        the selection's model uses a quarter, their 2,500).
    n_bins : int
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional

    Returns
    -------
    Release
        The synthetic table; ``info``: ``rho``, ``delta``, ``rows``, ``tree`` (its edges).

    Notes
    -----
    ``rho`` in thirds, as the authors' code: the 1-way marginals with ``sigma =
    sqrt(3 / (2 rho))`` (weights normalised, so the d measurements together cost ``rho/3``),
    the tree's ``r - 1`` edges by the exponential mechanism with ``eps = sqrt(8 (rho/3) /
    (r - 1))`` on the L1 error of each 2-way marginal under the 1-way model (sensitivity
    1), the tree's 2-way marginals with the same sigma.
    """
    p = _Problem(table, epsilon, delta, n_bins, rng, ledger)
    max_iters = _check_positive_int(max_iters, "max_iters")
    names = p.encoding.names
    if len(names) < 2:
        raise NotApplicableError("MST needs at least two attributes")
    p.encoding.check_marginals(2, MAX_MARGINAL_CELLS, "mst")   # every pair is scored
    rho = p.budget.rho
    sigma = np.sqrt(3 / (2 * rho))
    # d measurements with weights 1/sqrt(d) each (the authors' ``measure``): sigma sqrt(d)
    w = 1.0 / np.sqrt(len(names))
    oneway = [p.measure((a,), sigma / w, "1-way marginal") for a in names]
    data, domain, oneway, mapping = _compress_domain(p, oneway)
    p.data, p.domain = data, domain          # the compressed problem from here on

    est = p.estimate(oneway, max(max_iters // 4, 1))
    pairs = list(itertools.combinations(names, 2))
    estimates = model_marginals(est, pairs)
    weights = {e: np.abs(p.marginal(e) - estimates[e]).sum() for e in pairs}
    parent = {a: a for a in names}

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    r = len(names)
    eps = np.sqrt(8 * (rho / 3) / (r - 1))
    tree = []
    for _ in range(r - 1):
        cands = {e: weights[e] for e in weights if find(e[0]) != find(e[1])}
        e = p.select(cands, eps, 1.0, "select tree edge")
        parent[find(e[0])] = find(e[1])
        tree.append(e)
    w2 = 1.0 / np.sqrt(len(tree))
    twoway = [p.measure(e, sigma / w2, "2-way marginal") for e in tree]
    model = p.estimate(oneway + twoway, max_iters)
    out = p.release(model, mapping)
    out.info.update(tree=[list(e) for e in tree])
    return out
