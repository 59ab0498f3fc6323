"""The privacy-budget ledger: one place where every DP mechanism spends its epsilon.

A mechanism given ``epsilon`` spends it in parts (``ledger.spend(0.1 * eps, label=...,
sensitivity=...)``); the ledger records each part with its label, sensitivity and primitive,
refuses to overspend, and its record is stored with the results so that a reader can see
how the budget was split. Sequential composition adds the parts; parallel composition over
disjoint parts of the data (e.g. the leaves of a partition tree) costs the maximum of the
branches (:meth:`PrivacyLedger.parallel`).

Examples
--------
>>> ledger = PrivacyLedger(1.0)
>>> ledger.spend(0.1, label="select theta", sensitivity=1204.0)
0.1
>>> ledger.spend(ledger.remaining, label="histogram", sensitivity=2 * 16 + 1)
0.9
>>> ledger.remaining
0.0
"""

from __future__ import annotations

import json
import math
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from privpub.errors import BudgetExceededError, PrivpubError
from privpub.validation import check_epsilon

__all__ = ["PrivacyLedger", "LedgerEntry", "ensure_ledger", "ZCDPBudget", "zcdp_delta", "zcdp_rho"]

#: Relative slack for floating-point sums of budget parts (0.1 + 0.2 + 0.7 == 1.0).
_REL_TOL = 1e-9


@dataclass(frozen=True)
class LedgerEntry:
    """One spending: ``epsilon`` for ``label`` at ``path`` (branches joined by ``/``)."""

    path: str
    label: str
    epsilon: float
    sensitivity: float | None = None
    primitive: str | None = None


class PrivacyLedger:
    """Budget account of one mechanism run.

    Parameters
    ----------
    epsilon : float
        Total budget, > 0.
    label : str
        Name of this (sub-)ledger, used in entry paths.
    """

    def __init__(self, epsilon: float, *, label: str = ""):
        self.total = check_epsilon(epsilon)
        self.label = label
        self._spent = 0.0
        self._entries: list[LedgerEntry] = []

    # ---------------------------------------------------------------- accounting
    @property
    def spent(self) -> float:
        """Budget spent (the true sum is kept inside; this never reports a rounding crumb
        above the total)."""
        return min(self._spent, self.total)

    @property
    def remaining(self) -> float:
        """What may still be spent; amounts within the rounding slack of zero are zero."""
        left = self.total - self._spent
        return 0.0 if left <= self.total * _REL_TOL else left

    def spend(
        self,
        epsilon: float,
        *,
        label: str,
        sensitivity: float | None = None,
        primitive: str | None = None,
    ) -> float:
        """Record spending ``epsilon`` on ``label``; return ``epsilon``.

        Raises
        ------
        BudgetExceededError
            If the ledger's total would be exceeded.
        """
        epsilon = check_epsilon(epsilon, name=f"epsilon for {label!r}")
        if self._spent + epsilon > self.total * (1 + _REL_TOL):
            raise BudgetExceededError(
                f"spending {epsilon:.6g} on {label!r} would exceed the budget: "
                f"{self._spent:.6g} of {self.total:.6g} already spent"
            )
        if sensitivity is not None and not sensitivity > 0:
            raise PrivpubError(f"sensitivity for {label!r} must be > 0, got {sensitivity}")
        self._spent += epsilon  # the true sum: the slack is granted once, not per spend
        sens = None if sensitivity is None else float(sensitivity)
        self._entries.append(LedgerEntry(self.label, label, epsilon, sens, primitive))
        return epsilon

    def share(self, fraction: float) -> float:
        """``fraction`` of the *total* budget (a convenience for fixed splits, not a spend)."""
        if not 0 < fraction <= 1:
            raise PrivpubError(f"a budget fraction must be in (0, 1], got {fraction}")
        return self.total * fraction

    @contextmanager
    def parallel(self, label: str):
        """Parallel composition over disjoint parts of the data.

        Yields a function ``branch(name) -> PrivacyLedger``; every branch may spend up to
        what remains here now. On exit this ledger is charged the maximum any branch spent,
        and the branches' entries are kept under ``<label>/<name>``.

        Examples
        --------
        >>> ledger = PrivacyLedger(1.0)
        >>> with ledger.parallel("leaves") as branch:
        ...     for leaf in range(3):
        ...         _ = branch(f"leaf{leaf}").spend(0.5, label="count")
        >>> ledger.spent
        0.5
        """
        budget = self.remaining
        if budget <= 0:
            raise BudgetExceededError(f"no budget left for parallel part {label!r}")
        branches: list[PrivacyLedger] = []

        def branch(name: str) -> PrivacyLedger:
            child = PrivacyLedger(budget, label=self._join(label, name))
            branches.append(child)
            return child

        yield branch
        cost = max((b.spent for b in branches), default=0.0)
        for b in branches:
            self._entries.extend(b.entries)
        if cost > 0:
            self._spent += cost
            entry = LedgerEntry(self.label, f"{label} (parallel max)", cost, None, "parallel")
            self._entries.append(entry)

    def _join(self, *parts: str) -> str:
        return "/".join(p for p in (self.label, *parts) if p)

    # ---------------------------------------------------------------- reporting
    @property
    def entries(self) -> list[LedgerEntry]:
        return list(self._entries)

    def to_json(self) -> str:
        """The record stored with results: total, spent and every entry."""
        return json.dumps(
            {
                "total": self.total,
                "spent": self.spent,
                "entries": [asdict(e) for e in self._entries],
            },
            sort_keys=True,
        )

    def __repr__(self) -> str:
        n = len(self._entries)
        return f"PrivacyLedger(total={self.total:g}, spent={self.spent:g}, entries={n})"


def ensure_ledger(ledger: PrivacyLedger | None, epsilon: float) -> PrivacyLedger:
    """The ledger a mechanism spends through: ``ledger`` if given (its total must equal
    ``epsilon``), else a fresh one for ``epsilon``."""
    epsilon = check_epsilon(epsilon)
    if ledger is None:
        return PrivacyLedger(epsilon)
    if abs(ledger.total - epsilon) > epsilon * _REL_TOL:
        raise PrivpubError(f"ledger total {ledger.total} differs from epsilon {epsilon}")
    return ledger


# --------------------------------------------------------------------------- zCDP
def zcdp_delta(rho: float, epsilon: float) -> float:
    """The smallest ``delta`` for which ``rho``-zCDP implies ``(epsilon, delta)``-DP, by the
    conversion of Canonne, Kamath & Steinke [CKS20, Prop. 12 / Cor. 13]:
    ``delta = min_alpha exp((alpha - 1)(alpha rho - epsilon) + alpha log(1 - 1/alpha))
    / (alpha - 1)``, minimised over ``alpha > 1`` by bisection on the derivative (any
    ``alpha`` gives a valid bound, so an inexact minimum only makes ``delta`` larger).
    The conversion private-pgm's AIM and MST use (their ``cdp2adp.py``)."""
    if rho <= 0:
        return 0.0
    lo, hi = 1.01, (epsilon + 1.0) / (2.0 * rho) + 2.0
    for _ in range(200):
        alpha = 0.5 * (lo + hi)
        if (2 * alpha - 1) * rho - epsilon + math.log1p(-1.0 / alpha) < 0:
            lo = alpha
        else:
            hi = alpha
    alpha = 0.5 * (lo + hi)
    log_delta = ((alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha)
                 - math.log(alpha - 1.0))
    return min(math.exp(log_delta), 1.0)


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ``rho`` whose ``rho``-zCDP implies ``(epsilon, delta)``-DP
    (:func:`zcdp_delta` inverted by bisection; ``zcdp_delta(result, epsilon) <= delta``)."""
    epsilon = check_epsilon(epsilon)
    if not 0 < delta < 1:
        raise PrivpubError(f"delta must be in (0, 1), got {delta!r}")
    lo, hi = 0.0, epsilon + 1.0
    for _ in range(200):
        rho = 0.5 * (lo + hi)
        if zcdp_delta(rho, epsilon) <= delta:
            lo = rho
        else:
            hi = rho
    return lo


class ZCDPBudget:
    """A zCDP budget ``rho`` [BS16] bought with an ``(epsilon, delta)`` claim and spent
    through a :class:`PrivacyLedger` of ``epsilon``.

    zCDP composes by adding the ``rho`` of the parts; the parts' sum is converted to
    ``(epsilon, delta)`` once (:func:`zcdp_rho`), not part by part. The ledger, which counts
    epsilon, records each part as its share of ``epsilon``, ``epsilon * rho_part / rho``
    (label ``"... (zCDP rho=...)"``), so the ledger is spent exactly when ``rho`` is and a
    reader of the ledger sees the split. Primitives on sensitivity-1 queries: a Gaussian
    of standard deviation ``sigma`` costs ``1 / (2 sigma^2)`` [BS16 Prop 1.6]; an
    ``eps0``-DP exponential mechanism costs ``eps0^2 / 8`` [CR21, bounded range].
    """

    def __init__(self, ledger: PrivacyLedger, delta: float):
        self.ledger = ledger
        self.delta = float(delta)
        self.rho = zcdp_rho(ledger.total, self.delta)
        self._used = 0.0

    @property
    def used(self) -> float:
        return self._used

    @property
    def remaining(self) -> float:
        return max(self.rho - self._used, 0.0)

    def spend(self, rho: float, *, label: str, sensitivity: float | None = None,
              primitive: str | None = None) -> float:
        """Record ``rho`` spent on ``label``; return it (refused past the total)."""
        if not rho > 0:
            raise PrivpubError(f"rho for {label!r} must be > 0, got {rho}")
        eps = self.ledger.total * min(rho / self.rho, 1.0)
        if self._used + rho > self.rho * (1 + 1e-9):
            raise BudgetExceededError(
                f"spending rho {rho:.6g} on {label!r} would exceed the zCDP budget "
                f"{self.rho:.6g} ({self._used:.6g} already spent)")
        self._used += rho
        last = self._used >= self.rho * (1 - 1e-12)   # the rest of the ledger, not a residue
        self.ledger.spend(self.ledger.remaining if last else eps,
                          label=f"{label} (zCDP rho={rho:.4g})", sensitivity=sensitivity,
                          primitive=primitive)
        return rho

    def gaussian_rho(self, sigma: float, sensitivity: float = 1.0) -> float:
        """zCDP cost of Gaussian noise ``sigma`` on a query of L2 ``sensitivity``."""
        return sensitivity**2 / (2.0 * sigma**2)

    @staticmethod
    def exponential_rho(epsilon: float) -> float:
        """zCDP cost of an ``epsilon``-DP exponential mechanism (``epsilon^2 / 8``)."""
        return epsilon**2 / 8.0
