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
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from privpub.errors import BudgetExceededError, PrivpubError
from privpub.validation import check_epsilon

__all__ = ["PrivacyLedger", "LedgerEntry", "ensure_ledger"]

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
