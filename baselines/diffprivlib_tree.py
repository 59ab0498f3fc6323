"""IBM diffprivlib's private decision tree: an outside reference for farias2021 Fig. 6.

Fig 6 gains a diffprivlib DecisionTreeClassifier line as an outside reference (a
different private tree, labelled as such). This baseline wraps
``diffprivlib.models.DecisionTreeClassifier`` ([HBMAL19]) as a classifier release, exactly
as the DiffPID3 trees (:mod:`privpub.mechanisms.diffpid3`) are released: ``predict(table)`` and
``refit(table, rng=...)``, so the cross-validation metric ``accuracy_cv_learner`` scores it
with the same protocol (a new private tree on each training fold).

It is **not** farias2021's algorithm, nor one the paper compares with: diffprivlib's tree
draws its structure without looking at the data ([FI17]) and labels each leaf by
permute-and-flip ([MS20]); eps-DP by parallel composition over the leaves. What the
wrapper decides (features and bounds from the public schema, classes, randomness, budget,
the noise-free limit, the scikit-learn 1.9 shim, a missing diffprivlib) and why:
docs/design.md, "farias2021: local dampening" (diffprivlib).

References
----------
.. [HBMAL19] N. Holohan, S. Braghin, P. Mac Aonghusa, K. Levacher. Diffprivlib: the IBM
   Differential Privacy Library. arXiv:1907.02444, 2019.
   https://github.com/IBM/differential-privacy-library
.. [FI17] S. Fletcher, M. Z. Islam. Differentially private random decision forests using
   smooth sensitivity. Expert Systems with Applications 78, 2017.
.. [MS20] R. McKenna, D. Sheldon. Permute-and-flip: a new mechanism for differentially
   private selection. NeurIPS 2020.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field

import numpy as np

from privpub.algorithms.encoding import TableEncoder
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import is_noise_off, noise_off, uniform_integers
from privpub.registry import RECORD_DP, register_mechanism
from privpub.types import Kind, Schema, Table
from privpub.validation import check_depth, check_epsilon, check_rng

__all__ = [
    "CAVEAT",
    "DIFFPRIVLIB_REQUIREMENT",
    "DiffprivlibTree",
    "diffprivlib_tree",
    "sklearn_tree_compat",
]

#: The version this wrapper is written and tested against (pyproject's ``reference`` extra).
DIFFPRIVLIB_REQUIREMENT = "diffprivlib>=0.6.6"

#: Stored with every result row and shown as a footnote under the figure.
CAVEAT = (
    "Outside reference, not farias2021's method: IBM diffprivlib's DecisionTreeClassifier "
    "(random data-independent splits, leaf classes by permute-and-flip), a different private "
    "tree than DiffPID3. Its noise is drawn by diffprivlib, not privpub.noise; a compat shim "
    "for scikit-learn 1.9 (sklearn.tree._tree.DOUBLE and DTYPE restored) is applied"
)

#: Upper end (exclusive) of the seed handed to diffprivlib's RandomState.
_SEED_HIGH = 2**31 - 1


# --------------------------------------------------------------------------- diffprivlib
def sklearn_tree_compat() -> None:
    """Give ``sklearn.tree._tree`` back the two constants diffprivlib 0.6.6 imports.

    diffprivlib 0.6.6 (its latest release) runs ``from sklearn.tree._tree import Tree,
    DOUBLE, DTYPE, NODE_DTYPE`` when ``diffprivlib.models`` is imported; scikit-learn 1.9
    (checked with 1.9.1) no longer exports ``DOUBLE`` and ``DTYPE``, so the import fails with
    ``ImportError: cannot import name 'DOUBLE'``. They were scikit-learn's tree dtypes,
    ``float64`` (targets) and ``float32`` (features), and diffprivlib uses them only to cast
    the inputs of its *random forest*, not of the single tree used here. This sets a name
    only where it is missing (a no-op with a scikit-learn that still has them, or once
    diffprivlib stops importing them) and changes nothing else in scikit-learn.
    """
    from sklearn.tree import _tree

    for name, dtype in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(_tree, name):
            setattr(_tree, name, dtype)


def _diffprivlib():
    """``(DecisionTreeClassifier, BudgetAccountant, PrivacyLeakWarning)`` from diffprivlib.

    Raises
    ------
    NotApplicableError
        When diffprivlib cannot be imported: the runner records the cell as skipped with
        this reason instead of failing.
    """
    try:
        sklearn_tree_compat()
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import DecisionTreeClassifier
        from diffprivlib.utils import PrivacyLeakWarning
    except ImportError as exc:
        raise NotApplicableError(
            f"the outside reference needs {DIFFPRIVLIB_REQUIREMENT}, which cannot be imported "
            f"({exc}); install it (pip install -e '.[reference]') and rerun with "
            "rerun=true: a skipped cell is otherwise reused as it is"
        ) from exc
    return DecisionTreeClassifier, BudgetAccountant, PrivacyLeakWarning


# --------------------------------------------------------------------------- encoding
@dataclass(frozen=True)
class _Columns:
    """Public encoding of a table as diffprivlib's numeric ``X`` and class codes ``y``:
    :class:`privpub.algorithms.encoding.TableEncoder`, shared with DiffPID3 (which checks the
    schema: a
    class attribute with a public discrete domain, every other attribute with a public
    domain), numeric attributes kept as values, and the feature bounds from the domains."""

    encoder: TableEncoder
    lower: tuple[float, ...]
    upper: tuple[float, ...]

    @classmethod
    def from_schema(cls, schema: Schema) -> _Columns:
        enc = TableEncoder.from_schema(schema, n_bins=1)  # the bins are not used here
        pairs = list(zip(enc.domains, [k == "numeric" for k in enc.kinds], strict=True))
        lower = tuple(float(d[0]) if num else 0.0 for d, num in pairs)
        upper = tuple(float(d[1]) if num else float(len(d) - 1) for d, num in pairs)
        return cls(enc, lower, upper)

    @property
    def classes(self) -> tuple:
        return self.encoder.classes

    def encode(self, table: Table) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y)``: a float64 feature matrix (rows x features) and class indices."""
        return self.encoder.encode(table, raw_numeric=True)


# --------------------------------------------------------------------------- release
@dataclass(eq=False)
class DiffprivlibTree:
    """A released diffprivlib tree: ``predict(table)`` and ``refit(table, rng=...)``.

    ``refit`` learns a new tree from another table with the same parameters and a fresh
    budget (the cross-validation metric ``accuracy_cv_learner`` calls it on every training
    fold); a noise-free release refits noise-free.
    """

    columns: _Columns
    model: object  # the fitted diffprivlib.models.DecisionTreeClassifier
    params: dict = field(default_factory=dict)
    noise_free: bool = False
    info: dict = field(default_factory=dict)

    def predict(self, table: Table) -> np.ndarray:
        """Class values predicted for every row of ``table``."""
        x, _ = self.columns.encode(table)
        codes = np.asarray(self.model.predict(x), dtype=np.int64)
        return np.asarray(self.columns.classes, dtype=object)[codes]

    def refit(self, table: Table, *, rng) -> DiffprivlibTree:
        """A new tree learnt from ``table`` with the same parameters."""
        with noise_off() if self.noise_free else contextlib.nullcontext():
            return diffprivlib_tree(table, rng=rng, **self.params)


def _charge(ledger: PrivacyLedger, spent: float, n_leaves: int) -> None:
    """Charge what diffprivlib's accountant spent: permute-and-flip at every leaf, leaves
    holding disjoint records (one parallel block)."""
    with ledger.parallel("leaves") as branch:
        leaves = branch(f"{n_leaves} leaf classes (disjoint records)")
        leaves.spend(spent, label="leaf class (diffprivlib permute-and-flip)", sensitivity=1.0,
                     primitive="diffprivlib.PermuteAndFlip")


# --------------------------------------------------------------------------- mechanism
@register_mechanism(
    "diffprivlib_tree", input_kind=Kind.TABLE, output_kind=Kind.CLASSIFIER, privacy=RECORD_DP,
    paper="farias2021", role="baseline", caveat=CAVEAT,
    source="Fig. 6 (an outside reference drawn beside DiffPID3, not the paper's method)",
    audit={"cost_ms": 40},
    caveat_summary="an outside reference (IBM diffprivlib's tree, not DiffPID3), its noise drawn "
                   "by diffprivlib; a shim restores two constants scikit-learn 1.9 dropped",
    blind_spot="the caveat is about provenance (IBM diffprivlib's own tree and noise, a shim "
               "for two scikit-learn constants), not a leak: nothing for a black-box audit to "
               "refute",
)
def diffprivlib_tree(
    table: Table,
    *,
    epsilon: float,
    depth: int = 5,
    rng,
    ledger: PrivacyLedger | None = None,
) -> DiffprivlibTree:
    """IBM diffprivlib's private decision tree [HBMAL19] (outside reference, farias2021 Fig. 6).

    ``diffprivlib.models.DecisionTreeClassifier(epsilon=epsilon, max_depth=depth)``: random
    data-independent splits inside the public feature bounds, leaf classes by
    permute-and-flip ([FI17], [MS20]); see the module for the encoding, seeding, budget and
    noise-free limit. Drawn in farias2021 Fig. 6 beside DiffPID3, never part of its claims.

    Parameters
    ----------
    table : Table
        Records with a schema naming the class attribute; every attribute needs a public
        domain (numeric: ``(lo, hi)``).
    epsilon : float
        Total budget (every leaf spends all of it on disjoint records).
    depth : int
        ``max_depth``, >= 1 (diffprivlib grows a complete tree of this depth). Depth 0 is
        not applicable (diffprivlib rejects it).
    rng : numpy.random.Generator
        Seeds diffprivlib's RandomState.
    ledger : PrivacyLedger, optional

    Returns
    -------
    DiffprivlibTree

    Raises
    ------
    NotApplicableError
        When diffprivlib is not installed (or does not import), or ``depth == 0``.
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth(depth)
    rng = check_rng(rng)
    ledger = ensure_ledger(ledger, epsilon)
    if not isinstance(table, Table):
        raise PrivpubError(f"the diffprivlib tree needs a Table, got {type(table).__name__}")
    if depth < 1:
        raise NotApplicableError("diffprivlib's DecisionTreeClassifier needs max_depth >= 1")
    columns = _Columns.from_schema(table.schema)
    x, y = columns.encode(table)
    tree_cls, accountant_cls, leak_warning = _diffprivlib()
    noise_free = is_noise_off()
    seed = int(uniform_integers(0, _SEED_HIGH, rng=rng))  # 0 under noise_off
    fit_epsilon = float("inf") if noise_free else epsilon
    accountant = accountant_cls(epsilon=fit_epsilon)
    model = tree_cls(
        max_depth=depth,
        epsilon=fit_epsilon,
        bounds=(np.array(columns.lower), np.array(columns.upper)),
        classes=np.arange(len(columns.classes)),
        random_state=seed,
        accountant=accountant,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", leak_warning)  # never read bounds/classes from data
        model.fit(x, y)
    spent = float(accountant.total()[0])
    if not noise_free and abs(spent - epsilon) > 1e-9 * epsilon:
        raise PrivpubError(f"diffprivlib's accountant spent {spent}, expected {epsilon}")
    _charge(ledger, epsilon, int(model.get_n_leaves()))
    release = DiffprivlibTree(columns, model, {"epsilon": epsilon, "depth": depth}, noise_free)
    release.info = {"n_leaves": int(model.get_n_leaves()), "tree_depth": int(model.get_depth())}
    return release
