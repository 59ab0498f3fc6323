"""Tests of the privacy-budget ledger (privpub.ledger)."""

from __future__ import annotations

import json

import pytest

from privpub.errors import BudgetExceededError, PrivpubError
from privpub.ledger import LedgerEntry, PrivacyLedger, ensure_ledger


# --------------------------------------------------------------------------- overspending
def test_refuses_to_overspend():
    ledger = PrivacyLedger(1.0)
    ledger.spend(0.6, label="a")
    with pytest.raises(BudgetExceededError, match="'b'"):
        ledger.spend(0.5, label="b")
    assert ledger.spent == 0.6  # the refused spend left no trace
    assert [e.label for e in ledger.entries] == ["a"]
    ledger.spend(0.4, label="c")
    with pytest.raises(BudgetExceededError):
        ledger.spend(1e-6, label="d")
    with pytest.raises(BudgetExceededError):
        PrivacyLedger(0.5).spend(0.5 + 1e-6, label="too much at once")


@pytest.mark.parametrize(
    "total,parts",
    [
        (1.0, [0.1, 0.9]),
        (1.0, [0.3, 0.3, 0.3, 0.1]),
        (1.0, [0.1] * 10),
        (1.0, [0.1, 0.2, 0.7]),
        (0.3, [0.1, 0.1, 0.1]),
        (3.0, [1.1, 1.1, 0.8]),
        (1e-3, [1e-4] * 10),
    ],
)
def test_exact_splits_do_not_fail_by_rounding(total, parts):
    ledger = PrivacyLedger(total)
    for i, part in enumerate(parts):
        ledger.spend(part, label=f"part {i}")
    assert ledger.spent == pytest.approx(total)
    assert ledger.spent <= total
    # sums like 0.1 * 10 = 0.9999999999999999 leave a rounding crumb, never more
    assert ledger.remaining <= total * 1e-9
    with pytest.raises(BudgetExceededError):
        ledger.spend(total * 1e-6, label="one more")


def test_spending_the_remainder_and_shares():
    ledger = PrivacyLedger(2.0)
    ledger.spend(ledger.share(0.1), label="select")
    assert ledger.spend(ledger.remaining, label="rest") == pytest.approx(1.8)
    assert ledger.remaining == 0.0
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(PrivpubError):
            ledger.share(bad)


def test_many_tiny_spends_cannot_exceed_the_tolerance():
    ledger = PrivacyLedger(1.0)
    ledger.spend(1.0, label="all")
    accepted = 0
    for i in range(1000):
        try:
            ledger.spend(5e-10, label=f"tiny {i}")
            accepted += 1
        except BudgetExceededError:
            pass
    assert sum(e.epsilon for e in ledger.entries) <= 1.0 * (1 + 1e-9)


@pytest.mark.parametrize("bad", [0, -0.5, float("nan"), float("inf"), "0.1", None])
def test_bad_epsilon(bad):
    with pytest.raises(PrivpubError):
        PrivacyLedger(bad)
    with pytest.raises(PrivpubError):
        PrivacyLedger(1.0).spend(bad, label="x")


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_bad_sensitivity(bad):
    ledger = PrivacyLedger(1.0)
    with pytest.raises(PrivpubError, match="sensitivity"):
        ledger.spend(0.1, label="x", sensitivity=bad)
    assert ledger.spent == 0.0 and ledger.entries == []


# --------------------------------------------------------------------------- parallel composition
def test_parallel_composition_charges_the_largest_branch():
    ledger = PrivacyLedger(1.0, label="rps")
    ledger.spend(0.2, label="tree", sensitivity=1.0, primitive="laplace")
    with ledger.parallel("leaves") as branch:
        for name, eps in (("leaf0", 0.5), ("leaf1", 0.3), ("leaf2", 0.8)):
            branch(name).spend(eps, label="count", sensitivity=1.0, primitive="laplace")
    assert ledger.spent == pytest.approx(1.0)
    leaf_entries = [e for e in ledger.entries if e.label == "count"]
    assert [e.path for e in leaf_entries] == ["rps/leaves/leaf0", "rps/leaves/leaf1",
                                              "rps/leaves/leaf2"]
    (summary,) = [e for e in ledger.entries if e.primitive == "parallel"]
    assert summary.epsilon == pytest.approx(0.8) and summary.path == "rps"
    with pytest.raises(BudgetExceededError):
        ledger.spend(0.01, label="after")


def test_parallel_branch_cannot_exceed_what_remains():
    ledger = PrivacyLedger(1.0)
    ledger.spend(0.7, label="first")
    with pytest.raises(BudgetExceededError):
        with ledger.parallel("parts") as branch:
            branch("a").spend(0.2, label="ok")
            branch("b").spend(0.31, label="too much")
    # a branch that sums its parts sequentially
    fresh = PrivacyLedger(1.0)
    with fresh.parallel("parts") as branch:
        b = branch("a")
        b.spend(0.4, label="x")
        b.spend(0.6, label="y")
        with pytest.raises(BudgetExceededError):
            b.spend(0.1, label="z")
    assert fresh.spent == pytest.approx(1.0)


def test_nested_parallel_and_empty_parallel():
    ledger = PrivacyLedger(1.0)
    with ledger.parallel("level1") as outer:
        child = outer("a")
        with child.parallel("level2") as inner:
            inner("x").spend(0.25, label="leaf")
            inner("y").spend(0.5, label="leaf")
    assert ledger.spent == pytest.approx(0.5)
    assert "level1/a/level2/y" in {e.path for e in ledger.entries}
    with ledger.parallel("nothing"):
        pass
    assert ledger.spent == pytest.approx(0.5)
    ledger.spend(0.5, label="rest")
    with pytest.raises(BudgetExceededError, match="no budget"):
        with ledger.parallel("late"):
            pass


# --------------------------------------------------------------------------- record
def test_entries_and_json_round_trip():
    ledger = PrivacyLedger(1.0, label="day2016")
    ledger.spend(0.1, label="select theta", sensitivity=1204.0, primitive="exponential")
    with ledger.parallel("bins") as branch:
        branch("b0").spend(0.9, label="histogram", sensitivity=33, primitive="laplace")
    entries = ledger.entries
    assert entries[0] == LedgerEntry("day2016", "select theta", 0.1, 1204.0, "exponential")
    assert entries[1] == LedgerEntry("day2016/bins/b0", "histogram", 0.9, 33.0, "laplace")
    assert isinstance(entries[1].sensitivity, float)
    record = json.loads(ledger.to_json())
    assert record["total"] == 1.0 and record["spent"] == pytest.approx(1.0)
    assert [LedgerEntry(**e) for e in record["entries"]] == entries
    assert json.loads(json.dumps(record)) == record
    entries.clear()  # entries is a copy
    assert len(ledger.entries) == 3
    assert "total=1" in repr(ledger)


def test_ensure_ledger():
    fresh = ensure_ledger(None, 0.5)
    assert isinstance(fresh, PrivacyLedger) and fresh.total == 0.5 and fresh.spent == 0.0
    given = PrivacyLedger(0.1 + 0.2)
    assert ensure_ledger(given, 0.3) is given  # float rounding tolerated
    with pytest.raises(PrivpubError, match="differs"):
        ensure_ledger(PrivacyLedger(1.0), 0.5)
    with pytest.raises(PrivpubError):
        ensure_ledger(None, 0.0)
