"""The black-box audit of one mechanism configuration, and the replay of its witness.

:func:`audit` runs a registered DP mechanism (built-in or plug-in, found by name through the
registry) on neighbouring pairs of its own notion and returns a JSON-able result:

1. **Pairs.** The structured library and a randomised search
   (:mod:`privpub.audit.pairs`); pairs whose inputs the mechanism refuses are skipped
   (and listed).
2. **Screen.** A first batch of runs per input, in two halves. On the first half, per
   pair, the likelihood-ratio scores are fitted (:mod:`privpub.audit.statistics`) and, for
   every statistic, the event expected to give the largest bound is chosen
   (:func:`privpub.audit.estimator.candidate_events`); the second half rates it.
3. **Measure.** The best pairs' best tests on fresh runs, each bound at
   ``alpha / (2 tests)`` (Bonferroni): the family-wise error over every measured (pair,
   statistic) test is at most ``alpha``.
4. **Confirm.** A bound above the claim is measured again on fresh seeds (one test, level
   ``alpha / 2``) before the configuration is called ``violated``; the reported bound is
   the smaller of the two.
5. **Power check.** Otherwise the best pair and statistic are rerun at twice the claimed
   epsilon: unless that gives a bound above the claim, the audit could not have seen a
   violation of that size and says ``inconclusive``, never ``holds``. A bound above twice
   the claim there refutes the mechanism's claim at that epsilon: not ``holds`` either.
   So ``holds`` means: no violation seen at the claim, and a mechanism leaking twice the
   claim would have been seen (on the pair and statistic where it leaks most).

A local claim is audited as the central guarantee it implies
(:func:`privpub.registry.implied_central_epsilon`): an eps-edge-LDP mechanism on the
edge-DP neighbours at ``2 eps`` (the result's ``central_epsilon``).

The result is a deterministic function of (mechanism, configuration, mode, seed), the
running times aside. A violation carries a *witness* (the pair, the statistic, the event,
the counts, the seeds and where the mechanism came from, :mod:`privpub.audit.origin`) that
:func:`replay` reproduces run for run, importing a plug-in's module itself. Rationale:
docs/audit.md.

References
----------
.. [DWWZK18] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. Detecting violations of
   differential privacy. CCS 2018 (StatDP: event selection and measurement on separate
   samples).
.. [BGDCV21] B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev. DP-Sniper: black-box
   discovery of differential privacy violations using classifiers. IEEE S&P 2021.
.. [JUO20] M. Jagielski, J. Ullman, A. Oprea. Auditing differentially private machine
   learning: how private is private SGD? NeurIPS 2020 (Clopper-Pearson epsilon bounds).
.. [NSTPC21] M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini. Adversary
   instantiation: lower bounds for differentially private machine learning. IEEE S&P 2021.
.. [CP34] C. J. Clopper, E. S. Pearson. Biometrika 26(4), 1934.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.audit import inputs
from privpub.audit.configs import audit_settings, call_parameters
from privpub.audit.estimator import (
    Candidate,
    Event,
    candidate_events,
    epsilon_lower_bound,
    rescored,
)
from privpub.audit.neighbours import Neighbourhood, get_neighbourhood, neighbourhood_for
from privpub.audit.origin import import_origin, origin_of
from privpub.audit.pairs import Pair, random_pairs, structured_pairs
from privpub.audit.statistics import (
    Columns,
    fit_scores,
    release_statistics,
    relevant_statistics,
    score_from_json,
)
from privpub.errors import ConfigError, UnknownNameError
from privpub.registry import (
    MechanismInfo,
    get_mechanism,
    implied_central_epsilon,
    neighbour_notion,
)
from privpub.types import Kind
from privpub.validation import check_fraction, check_nonnegative_int

__all__ = ["Plan", "MODES", "VERDICTS", "audit", "replay"]

#: Verdicts of an audited configuration.
VERDICTS = ("holds", "violated", "inconclusive")
#: Random streams: one per phase (and per input, see :class:`_Sampler`).
_PHASES = {"pairs": 0, "validate": 1, "screen": 2, "measure": 3, "confirm": 4,
           "power_screen": 5, "power_measure": 6}


@dataclass(frozen=True)
class Plan:
    """Sample sizes of one audit mode.

    Attributes
    ----------
    screen : int
        Runs per input in the first batch (choice of events).
    measure : int
        Runs per input when measuring, confirming and checking power.
    structured, random : int
        Structured pairs (at most) and random pairs.
    pairs : int
        Pairs measured (the best of the first batch).
    tests : int
        Tests measured (Bonferroni over them).
    statistics : int
        Numeric statistics looked at per pair (those that differ most in the first batch;
        structural and non-numeric ones always).
    """

    screen: int
    measure: int
    structured: int
    random: int
    pairs: int
    tests: int
    statistics: int

    def scaled(self, budget: float) -> Plan:
        """Runs per input times ``budget`` (<= 1, :mod:`privpub.audit.configs`; at least 20
        screening and 100 measuring runs), pairs times its square root (at least 4
        structured and 1 random)."""
        root = math.sqrt(budget)
        return dataclasses.replace(
            self,
            screen=max(20, int(self.screen * budget)),
            measure=max(100, int(self.measure * budget)),
            structured=max(4, round(self.structured * root)),
            random=max(1, round(self.random * root)),
        )


#: ``quick``: a fast look and CI; ``full``: the stored verdicts.
MODES = {
    "quick": Plan(screen=100, measure=2000, structured=8, random=4, pairs=1, tests=4,
                  statistics=16),
    "full": Plan(screen=300, measure=6000, structured=32, random=16, pairs=3, tests=12,
                 statistics=48),
}


# --------------------------------------------------------------------------- sampling
class _Sampler:
    """Runs of one mechanism configuration, as statistic columns, cached per (input,
    phase, epsilon); the random stream of each is
    ``SeedSequence([seed, phase, input digest, epsilon in millionths])``."""

    def __init__(self, info: MechanismInfo, params: dict, seed: int, diagnostics):
        self.info, self.params, self.seed = info, params, seed
        self.diagnostics = diagnostics
        self.probe = inputs.probe_table(inputs.TINY_SCHEMA) if (
            info.output_kind == Kind.CLASSIFIER) else None
        self.runs = 0
        self._cache: dict[tuple, Columns] = {}
        self._digests: dict[int, tuple[Any, str]] = {}

    def digest(self, x) -> str:
        """:func:`privpub.audit.inputs.input_digest`, once per input object."""
        if id(x) not in self._digests:
            self._digests[id(x)] = (x, inputs.input_digest(x))  # keeps x alive: ids stay unique
        return self._digests[id(x)][1]

    def rng(self, phase: str, x, epsilon: float) -> np.random.Generator:
        entropy = [self.seed, _PHASES[phase], int(self.digest(x), 16),
                   int(round(epsilon * 1_000_000))]
        return np.random.default_rng(np.random.SeedSequence(entropy))

    def run_once(self, x, epsilon: float, rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.info.func(x, rng=rng, **{**self.params, "epsilon": epsilon})

    def columns(self, x, phase: str, n: int, epsilon: float) -> Columns:
        key = (self.digest(x), phase, epsilon, n)
        if key not in self._cache:
            rng = self.rng(phase, x, epsilon)
            records = []
            for _ in range(n):
                try:
                    out = self.run_once(x, epsilon, rng)
                    records.append(release_statistics(out, self.info.output_kind,
                                                      probe=self.probe,
                                                      diagnostics=self.diagnostics))
                except Exception as exc:  # an exception is an observable outcome too
                    records.append({"error": type(exc).__name__})
            self.runs += n
            self._cache[key] = Columns(records)
        return self._cache[key]


@dataclass
class _Test:
    """A (pair, statistic, event) chosen on the first batch, and what it measured."""

    pair: int
    candidate: Candidate
    score: Any = None  # the fitted likelihood-ratio score when the statistic is one
    counts: tuple[int, int, int, int] | None = None
    bound: float = 0.0

    @property
    def feature(self) -> str:
        return self.candidate.event.feature


def _oriented(pair: Pair, swapped: bool) -> tuple:
    return (pair.d_prime, pair.d) if swapped else (pair.d, pair.d_prime)


def _measure(sampler: _Sampler, pair: Pair, test: _Test, phase: str, n: int,
             epsilon: float, level: float) -> tuple[tuple[int, int, int, int], float]:
    first, second = _oriented(pair, test.candidate.swapped)
    cols = [sampler.columns(x, phase, n, epsilon) for x in (first, second)]
    if test.score is not None:
        cols = [c.extended({test.feature: test.score(c)}) for c in cols]
    c1, c2 = (int(np.count_nonzero(test.candidate.event(c))) for c in cols)
    counts = (c1, n, c2, n)
    return counts, epsilon_lower_bound(c1, n, c2, n, level)


# --------------------------------------------------------------------------- phases
def _pairs(hood, params, plan, seed) -> list[Pair]:
    sizing = inputs.sizing_for(params)
    rng = np.random.default_rng(np.random.SeedSequence([seed, _PHASES["pairs"]]))
    structured = structured_pairs(hood, sizing, params)[: plan.structured]
    return structured + random_pairs(hood, sizing, plan.random, rng)


def _valid_pairs(sampler: _Sampler, pairs: list[Pair], epsilon: float):
    """Pairs whose two inputs the mechanism accepts, and the skipped ones with the reason."""
    refused: dict[str, str] = {}
    for pair in pairs:
        for x in (pair.d, pair.d_prime):
            digest = sampler.digest(x)
            if digest in refused:
                continue
            try:
                sampler.run_once(x, epsilon, sampler.rng("validate", x, epsilon))
                refused[digest] = ""
            except Exception as exc:
                refused[digest] = f"{type(exc).__name__}: {exc}"
    valid, skipped = [], []
    for pair in pairs:
        reasons = [refused[sampler.digest(x)] for x in (pair.d, pair.d_prime)]
        reason = next((r for r in reasons if r), "")
        if reason:
            skipped.append({"pair": pair.name, "reason": reason[:200]})
        else:
            valid.append(pair)
    return valid, skipped


def _halves(cols: Columns) -> tuple[Columns, Columns]:
    rows = np.arange(cols.n)
    return cols.subset(rows[0::2]), cols.subset(rows[1::2])


def _screen(sampler, pairs, plan, epsilon, level) -> list[_Test]:
    """Per pair and statistic, the best event chosen on one half of the first batch and
    rated on the other (:func:`privpub.audit.estimator.rescored`)."""
    tests = []
    for i, pair in enumerate(pairs):
        (a, a_rate), (b, b_rate) = (
            _halves(sampler.columns(x, "screen", plan.screen, epsilon))
            for x in (pair.d, pair.d_prime))
        names = relevant_statistics(a, b, limit=plan.statistics)
        scores = fit_scores(a, b, names)
        if scores:
            a, b, a_rate, b_rate = (c.extended({k: s(c) for k, s in scores.items()})
                                    for c in (a, b, a_rate, b_rate))
        for name in names + sorted(scores):
            for cand in candidate_events(name, a, b, n_measure=plan.measure, level=level):
                rated = rescored(cand, a_rate, b_rate, n_measure=plan.measure, level=level)
                tests.append(_Test(i, rated, scores.get(name)))
    return tests


def _select(tests: list[_Test], plan: Plan) -> list[_Test]:
    """The best ``plan.pairs`` pairs, and in them the best ``plan.tests`` tests (one per
    pair first, distinct statistics)."""
    order = sorted(tests, key=lambda t: (-t.candidate.score, t.pair, t.feature,
                                         t.candidate.swapped))
    best_pairs: list[int] = []
    for t in order:
        if t.pair not in best_pairs:
            best_pairs.append(t.pair)
    best_pairs = best_pairs[: plan.pairs]
    chosen, seen = [], set()
    for first_round in (True, False):
        for t in order:
            key = (t.pair, t.feature, t.candidate.swapped)
            if t.pair not in best_pairs or key in seen or len(chosen) >= plan.tests:
                continue
            if first_round and any(c.pair == t.pair for c in chosen):
                continue
            chosen.append(t)
            seen.add(key)
    return chosen


def _power(sampler, pair: Pair, test: _Test, plan: Plan, epsilon: float,
           level: float, factor: float = 1.0) -> dict:
    """The same pair and statistic at twice the claim: does the audit see a bound above
    the claim? (A new event is chosen for it on a first batch, a score is refitted.)
    ``epsilon`` is the mechanism's parameter; the claim tested is ``factor * epsilon``
    (:func:`privpub.registry.implied_central_epsilon`)."""
    doubled = 2 * epsilon
    claim = factor * epsilon
    a = sampler.columns(pair.d, "power_screen", plan.screen, doubled)
    b = sampler.columns(pair.d_prime, "power_screen", plan.screen, doubled)
    score = None
    if test.score is not None:
        names = relevant_statistics(a, b, limit=plan.statistics)
        score = fit_scores(a, b, names).get(test.feature)
        if score is None:
            return {"epsilon": doubled, "lower_bound": 0.0, "passed": False,
                    "statistic": test.feature}
        a, b = a.extended({test.feature: score(a)}), b.extended({test.feature: score(b)})
    cands = candidate_events(test.feature, a, b, n_measure=plan.measure, level=level)
    if not cands:
        return {"epsilon": doubled, "lower_bound": 0.0, "passed": False,
                "statistic": test.feature}
    best = max(cands, key=lambda c: (c.score, not c.swapped))
    check = _Test(test.pair, best, score)
    counts, bound = _measure(sampler, pair, check, "power_measure", plan.measure, doubled,
                             level)
    return {"epsilon": doubled, "lower_bound": bound,
            "passed": claim < bound <= 2 * claim, "exceeds_doubled_claim": bound > 2 * claim,
            "statistic": test.feature,
            "event": best.event.describe(), "counts": list(counts)}


# --------------------------------------------------------------------------- audit
def _resolve(mechanism) -> MechanismInfo:
    info = mechanism if isinstance(mechanism, MechanismInfo) else get_mechanism(mechanism)
    if not info.is_dp:
        raise ConfigError(f"mechanism {info.name!r} claims {info.privacy!r}, not a DP notion: "
                          "the audit checks epsilon-DP claims only")
    return info


def _witness_mechanism(witness: dict) -> MechanismInfo:
    """The witness's mechanism; a plug-in's module is imported from the witness's
    ``mechanism_origin`` (:mod:`privpub.audit.origin`) unless it is loaded already."""
    name, origin, problem = witness["mechanism"], witness.get("mechanism_origin"), None
    try:
        import_origin(origin)
    except ConfigError as exc:  # said only if the name is not found elsewhere either
        problem = str(exc)
    try:
        return _resolve(name)
    except UnknownNameError as exc:
        if not origin:  # a witness stored before witnesses kept their mechanism's origin
            raise ConfigError(f"{exc} (import its module with --plugins)") from None
        problem = problem or f"its module {origin.get('module')!r} registers no such name now"
        raise ConfigError(f"cannot replay the witness of {name!r}: {problem}; import "
                          "where it is now with --plugins") from None


def _test_json(test: _Test, pairs: list[Pair], level: float) -> dict:
    pair = pairs[test.pair]
    return {"pair": pair.name, "origin": pair.origin, "statistic": test.feature,
            "event": test.candidate.event.describe(),
            "direction": "D' vs D" if test.candidate.swapped else "D vs D'",
            "counts": list(test.counts or ()), "lower_bound": test.bound, "level": level}


@dataclass
class _Audit:
    """One audit's fixed parts."""

    info: MechanismInfo
    hood: Neighbourhood
    params: dict
    seed: int
    alpha: float
    diagnostics: Any
    plan: Plan
    sampler: _Sampler

    @property
    def epsilon(self) -> float:
        """The mechanism's epsilon parameter."""
        return float(self.params["epsilon"])

    @property
    def factor(self) -> float:
        return implied_central_epsilon(self.info.privacy, 1.0)

    @property
    def claim(self) -> float:
        """The central epsilon tested: the parameter, or what a local claim implies."""
        return implied_central_epsilon(self.info.privacy, self.epsilon)

    def diagnostics_json(self):
        return self.diagnostics if self.diagnostics is True else list(self.diagnostics)


def _setup(mechanism, config, mode, seed, alpha, diagnostics, neighbourhood):
    info = _resolve(mechanism)
    if isinstance(mode, Plan):
        base, mode = mode, "custom"
    elif mode in MODES:
        base = MODES[mode]
    else:
        raise ConfigError(f"unknown audit mode {mode!r}; use one of {sorted(MODES)}")
    config = dict(config or {})
    if "epsilon" not in config:
        raise ConfigError("the audited configuration needs its claimed 'epsilon'")
    params = call_parameters(info, config)
    seed = check_nonnegative_int(seed, "seed")
    diagnostics = diagnostics if diagnostics is True else tuple(sorted(diagnostics))
    settings = audit_settings(info)
    hood = neighbourhood_for(info.input_kind, neighbour_notion(info.privacy),
                             neighbourhood or settings.neighbourhood)
    run = _Audit(info, hood, params, seed, check_fraction(alpha, "alpha"), diagnostics,
                 base.scaled(settings.budget), _Sampler(info, params, seed, diagnostics))
    return run, mode


def _witness(run: _Audit, pair: Pair, test: _Test, counts, bound: float) -> dict:
    first, second = _oriented(pair, test.candidate.swapped)
    return {
        "mechanism": run.info.name, "mechanism_origin": origin_of(run.info),
        "privacy": run.info.privacy, "neighbourhood": run.hood.name, "params": run.params,
        "epsilon": run.epsilon, "central_epsilon": run.claim,
        "pair": {"name": pair.name, "origin": pair.origin,
                 "d": inputs.encode_input(first), "d_prime": inputs.encode_input(second)},
        "statistic": test.feature, "event": test.candidate.event.to_json(),
        "score": None if test.score is None else test.score.to_json(),
        "counts": {"d": counts[0], "d_prime": counts[2], "runs": counts[1]},
        "seed": run.seed, "phase": "confirm", "alpha": run.alpha, "level": run.alpha / 2,
        "diagnostics": run.diagnostics_json(), "lower_bound": bound,
    }


def _decide(run: _Audit, pairs: list[Pair], chosen: list[_Test], level: float,
            result: dict) -> tuple[str, float]:
    """Confirmation or power check after the measurement: the verdict and the bound."""
    best = max(chosen, key=lambda t: (t.bound, t.candidate.score), default=None)
    if best is None:
        return "inconclusive", 0.0
    epsilon, plan, claim = run.epsilon, run.plan, run.claim
    if best.bound <= claim:
        result["power_check"] = _power(run.sampler, pairs[best.pair], best, plan, epsilon,
                                       level, run.factor)
        return ("holds" if result["power_check"]["passed"] else "inconclusive"), best.bound
    counts, confirmed = _measure(run.sampler, pairs[best.pair], best, "confirm", plan.measure,
                                 epsilon, run.alpha / 2)
    result["confirmation"] = {"counts": list(counts), "lower_bound": confirmed,
                              "level": run.alpha / 2}
    if confirmed <= claim:
        return "inconclusive", min(best.bound, confirmed)
    result["witness"] = _witness(run, pairs[best.pair], best, counts, confirmed)
    return "violated", min(best.bound, confirmed)


def audit(mechanism, config: dict | None = None, *, mode: str | Plan = "quick", seed: int = 0,
          alpha: float = 0.01, diagnostics=(), neighbourhood: str | None = None) -> dict:
    """Audit one configuration of a DP mechanism under its own privacy notion.

    Parameters
    ----------
    mechanism : str or MechanismInfo
        A registered mechanism (plug-ins: import their module first).
    config : dict, optional
        Parameters of the call; must hold ``epsilon`` (the claim). Missing parameters take
        the signature defaults.
    mode : {"quick", "full"} or Plan
        Sample sizes (:data:`MODES`, or a :class:`Plan`), times the mechanism's ``budget``
        (:mod:`privpub.audit.configs`).
    seed : int
        Base seed; the result is a deterministic function of the arguments.
    alpha : float
        Family-wise error of the measured tests, and of the confirmation.
    diagnostics : collection of str, or True
        ``Release.info`` keys declared non-private (not audited); ``True``: all of them.
        By default every info field is treated as released.
    neighbourhood : str, optional
        Override the neighbouring relation (:mod:`privpub.audit.neighbours`).

    Returns
    -------
    dict
        JSON-able: ``verdict`` (:data:`VERDICTS`), ``epsilon`` (claimed),
        ``epsilon_lower_bound``, ``ci_level``, ``samples`` (mechanism runs), ``seconds``
        and ``cpu_seconds`` (the only entries that vary between identical calls),
        ``power_check``, ``confirmation``, ``tests`` (the measured ones), ``pairs``,
        ``info_leaks`` (``info/`` statistics whose measured bound exceeds the claim),
        ``witness`` (a violation's, for :func:`replay`), ``mechanism_origin``
        (:func:`privpub.audit.origin.origin_of`: a plug-in's file is a path of this
        machine), and the configuration.
    """
    start, cpu_start = time.perf_counter(), time.process_time()
    run, mode = _setup(mechanism, config, mode, seed, alpha, diagnostics, neighbourhood)
    epsilon, plan, sampler = run.epsilon, run.plan, run.sampler
    pairs, skipped = _valid_pairs(sampler, _pairs(run.hood, run.params, plan, run.seed),
                                  epsilon)
    chosen = _select(_screen(sampler, pairs, plan, epsilon, run.alpha / (2 * plan.tests)),
                     plan)
    level = run.alpha / (2 * max(1, len(chosen)))
    for t in chosen:
        t.counts, t.bound = _measure(sampler, pairs[t.pair], t, "measure", plan.measure,
                                     epsilon, level)
    result = {
        "mechanism": run.info.name, "mechanism_origin": origin_of(run.info),
        "privacy": run.info.privacy, "neighbourhood": run.hood.name, "params": run.params,
        "caveat": run.info.caveat_for(run.params), "mode": mode, "seed": run.seed,
        "epsilon": epsilon, "central_epsilon": run.claim,
        "alpha": run.alpha, "ci_level": 1 - run.alpha,
        "diagnostics": run.diagnostics_json(),
        "pairs": {"audited": len(pairs),
                  "structured": sum(p.origin == "structured" for p in pairs),
                  "random": sum(p.origin == "random" for p in pairs), "skipped": skipped},
        "tests": [_test_json(t, pairs, level) for t in chosen],
        "info_leaks": sorted({t.feature for t in chosen
                              if t.feature.startswith("info/") and t.bound > run.claim}),
        "confirmation": None, "power_check": None, "witness": None,
    }
    verdict, bound = _decide(run, pairs, chosen, level, result)
    result.update(verdict=verdict, epsilon_lower_bound=bound, samples=sampler.runs,
                  seconds=time.perf_counter() - start,
                  cpu_seconds=time.process_time() - cpu_start)
    return result


def replay(witness: dict) -> dict:
    """Rerun a violation's confirmation from its witness, run for run. A plug-in
    mechanism that is not registered is imported from the witness's ``mechanism_origin``.

    Returns
    -------
    dict
        ``reproduced`` (the same counts), ``counts``, ``lower_bound``, ``violated`` (the
        bound exceeds the claimed epsilon), ``neighbours`` (the two inputs are neighbours
        under the witness's relation) and ``epsilon``.
    """
    info = _witness_mechanism(witness)
    hood: Neighbourhood = get_neighbourhood(witness["neighbourhood"])
    params = call_parameters(info, witness["params"])
    epsilon = float(witness["epsilon"])
    claim = implied_central_epsilon(info.privacy, epsilon)
    d = inputs.decode_input(witness["pair"]["d"])
    d_prime = inputs.decode_input(witness["pair"]["d_prime"])
    diagnostics = witness.get("diagnostics", ())
    sampler = _Sampler(info, params, int(witness["seed"]),
                       diagnostics if diagnostics is True else tuple(diagnostics))
    score = None if witness.get("score") is None else score_from_json(witness["score"])
    test = _Test(0, Candidate(0.0, Event.from_json(witness["event"]), False), score)
    runs = int(witness["counts"]["runs"])
    counts, bound = _measure(sampler, Pair("witness", "replay", d, d_prime), test,
                             witness.get("phase", "confirm"), runs, epsilon,
                             float(witness["level"]))
    stored = (witness["counts"]["d"], runs, witness["counts"]["d_prime"], runs)
    return {"reproduced": tuple(counts) == tuple(stored), "counts": list(counts),
            "lower_bound": bound, "violated": bound > claim, "epsilon": epsilon,
            "central_epsilon": claim,
            "neighbours": bool(hood.are_neighbours(d, d_prime))}
