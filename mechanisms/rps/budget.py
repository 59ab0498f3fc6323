"""RPS's privacy budget: how a root-to-leaf path's epsilon is split (qardaji2012 Sec 3.2) and
how the tree's spends are recorded in the caller's ledger.

The split and the per-path (parallel composition) argument are explained in docs/design.md,
"qardaji2012: RPS".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from privpub.errors import PrivpubError
from privpub.ledger import LedgerEntry, PrivacyLedger
from privpub.mechanisms.rps.checks import check_real, check_share

if TYPE_CHECKING:
    from privpub.mechanisms.rps.framework import RPSTree, TreeNode

__all__ = ["PathBudget", "LEDGER_DETAILS", "record_spends"]

#: How :func:`record_spends` writes a tree into the caller's ledger.
LEDGER_DETAILS = ("profile", "full")


@dataclass(frozen=True)
class PathBudget:
    """How a path's budget is split (Sec 3.2): ``split`` for the leaf summary, the rest in
    equal parts over the ``depth`` levels, each level's part divided between the noisy
    stopping check (``stop_share``) and the partition.

    Parameters
    ----------
    split : float in (0, 1]
        Share of epsilon reserved for the leaf summary (paper: 1/2). 1 leaves nothing for
        data-dependent partitions or stopping checks (allowed only when neither is used).
    stop_share : float in (0, 1)
        Share of each level's budget for the stopping check when both the check and the
        partition query the data (our choice: 1/2; the paper leaves it open).
    level_ratio : float > 0
        How the levels share ``(1 - split) eps``: level ``i`` (0 at the root) gets a part
        proportional to ``level_ratio ** i``. 1 (default): equal parts, our reading of
        Sec 3.2; < 1 front-loads the budget on the shallow levels, where a path always
        passes, so a deep maximum depth costs the first splits little (qardaji2012 Fig. 1
        probe). Any ratio keeps every path within eps.
    """

    split: float = 0.5
    stop_share: float = 0.5
    level_ratio: float = 1.0

    def __post_init__(self):
        check_share(self.split, "split")
        check_share(self.stop_share, "stop_share", allow_one=False)
        check_real(self.level_ratio, "level_ratio", low=0.0, strict=True)

    def per_level(
        self,
        epsilon: float,
        depth: int,
        *,
        partition_spends: bool,
        stop_spends: bool,
        level: int | None = None,
    ) -> tuple[float, float]:
        """``(eps_stop, eps_partition)`` spent at an internal node of depth ``level`` (every
        level alike when ``level_ratio`` is 1). A subroutine that does not query the data
        gets nothing and the other the whole level."""
        if depth == 0 or not (partition_spends or stop_spends):
            return 0.0, 0.0
        if self.split >= 1.0:
            raise PrivpubError(
                "split = 1 leaves no budget for the partition or the noisy stopping check; "
                "use split < 1, or a data-independent partition without a noisy-count stop"
            )
        level_eps = (1.0 - self.split) * epsilon / depth
        if self.level_ratio != 1.0 and level is not None:
            r = float(self.level_ratio)
            weights = r ** np.arange(depth, dtype=float)
            level_eps = (1.0 - self.split) * epsilon * float(weights[level] / weights.sum())
        level = level_eps
        if partition_spends and stop_spends:
            return self.stop_share * level, (1.0 - self.stop_share) * level
        return (level, 0.0) if stop_spends else (0.0, level)


def record_spends(ledger: PrivacyLedger, tree: RPSTree, detail: str = "profile") -> None:
    """Write the spends of ``tree`` into ``ledger``; ``ledger.spent`` is then the most any
    path spent (<= the tree's epsilon).

    ``detail="profile"`` (compact): one :meth:`~privpub.ledger.PrivacyLedger.parallel` block
    over the disjoint paths, with one branch per distinct *path profile* (the sequence of
    spends along a path; all paths that end at the same depth for the same reason share
    one) holding that profile's spends aggregated by label. The parent is charged the
    maximum branch, i.e. the most expensive path: a few dozen entries instead of one per
    tree node, so the record stored with every result row stays small.

    ``detail="full"``: the tree itself, nested ``parallel`` blocks, one per internal node,
    with branches ``L``/``R``. Exact but one entry per query (for tests, on small trees).
    """
    if detail == "full":
        _replay(ledger, tree.nodes, 0)
    else:
        _record_profiles(ledger, tree)


def _respend(ledger: PrivacyLedger, entry: LedgerEntry, label: str | None = None) -> None:
    ledger.spend(
        entry.epsilon,
        label=entry.label if label is None else label,
        sensitivity=entry.sensitivity,
        primitive=entry.primitive,
    )


def _replay(ledger: PrivacyLedger, nodes: list[TreeNode], index: int) -> None:
    """Spend the tree node's entries, then its children inside one parallel block."""
    tn = nodes[index]
    for e in tn.entries:
        _respend(ledger, e)
    if tn.children is not None:
        with ledger.parallel(f"split at depth {tn.depth}") as branch:
            for name, child in zip(("L", "R"), tn.children, strict=True):
                _replay(branch(name), nodes, child)


def _record_profiles(ledger: PrivacyLedger, tree: RPSTree) -> None:
    """One parallel block over the disjoint root-to-leaf paths, one branch per distinct
    sequence of spends, aggregated by (label, sensitivity, primitive)."""
    groups: dict[tuple, list] = {}
    for i, leaf in enumerate(tree.leaves):
        groups.setdefault((leaf.depth, leaf.reason, leaf.profile), []).append(i)
    profiles = {key: tree.profile_entries(key[2]) for key in groups}
    if not any(profiles.values()):
        return  # nothing spent at all (e.g. a summary that spends nothing)
    with ledger.parallel("RPS: disjoint root-to-leaf paths (parallel composition)") as branch:
        for (leaf_depth, reason, pid), members in groups.items():
            entries = profiles[(leaf_depth, reason, pid)]
            b = branch(f"{len(members)} path(s) ending at depth {leaf_depth} ({reason} stop)")
            totals: dict[tuple, list] = {}
            for label, eps, sens, prim in entries:
                slot = totals.setdefault((label, sens, prim), [0.0, 0])
                slot[0] += eps
                slot[1] += 1
            for (label, sens, prim), (eps, times) in totals.items():
                shown = label if times == 1 else f"{label} (x{times}, {eps / times:.6g} each)"
                b.spend(eps, label=shown, sensitivity=sens, primitive=prim)
