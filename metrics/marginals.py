"""Marginal errors of a released table: how the field of marginal-based synthesizers
measures a synthetic table.

Both tables are discretised by the truth's public schema
(:class:`privpub.algorithms.encoding.MarginalDomain`, 32 equal-width bins per numeric
attribute) and every k-way marginal is normalised to a distribution (the release may hold
a different number of rows than the input):

* ``marginal_l1_3way``: the average over ALL 3-way marginals of ``||M_r(D)/|D| -
  M_r(D')/|D'| ||_1``, in [0, 2]: AIM's workload error on its "all 3-way" workload
  [MMSM22, Sec. 6.1 and Eq. (1)];
* ``tvd_1way`` and ``tvd_2way``: the average total variation distance (half the L1
  distance, in [0, 1]) over all 1-way and all 2-way marginals, the measure of private-pgm's
  example scripts and of the NIST synthetic-data challenge's k-marginal scores.

References
----------
.. [MMSM22] R. McKenna, B. Mullins, D. Sheldon, G. Miklau. AIM: An Adaptive and Iterative
   Mechanism for Differentially Private Synthetic Data. PVLDB 15(11), 2022.
"""

from __future__ import annotations

import itertools

import numpy as np

from privpub.algorithms.encoding import MarginalDomain
from privpub.errors import PrivpubError
from privpub.metrics._memo import memo
from privpub.registry import register_metric
from privpub.types import Kind, Table

__all__ = ["marginal_errors", "marginal_l1_3way", "tvd_1way", "tvd_2way", "METRIC_BINS"]

#: Bins per numeric attribute when a metric discretises a table (the synthesizers' default).
METRIC_BINS = 32


def _marginals(codes: np.ndarray, sizes, way: int) -> list[np.ndarray]:
    """Every ``way``-way marginal of ``codes`` as a normalised distribution."""
    out = []
    n = max(codes.shape[0], 1)
    for cl in itertools.combinations(range(codes.shape[1]), way):
        dims = [sizes[j] for j in cl]
        idx = np.ravel_multi_index([codes[:, j] for j in cl], dims)
        out.append(np.bincount(idx, minlength=int(np.prod(dims))) / n)
    return out


def marginal_errors(truth: Table, release: Table, way: int) -> np.ndarray:
    """L1 distance of each ``way``-way marginal of ``release`` from ``truth``'s (both
    normalised), in ``itertools.combinations`` order of the schema's attributes."""
    for role, t in (("truth", truth), ("release", release)):
        if not isinstance(t, Table):
            raise PrivpubError(f"{role} must be a Table, got {type(t).__name__}")
    domain = memo(truth, ("marginal_domain", METRIC_BINS),
                  lambda: MarginalDomain.from_table(truth, METRIC_BINS))
    if way > len(domain.names):
        raise PrivpubError(f"a {way}-way marginal needs {way} attributes; the table has "
                           f"{len(domain.names)}")
    if release.n_rows == 0:
        raise PrivpubError("the release has no rows: its marginals are undefined")
    ref = memo(truth, ("marginals", METRIC_BINS, way),
               lambda: _marginals(domain.encode(truth), domain.sizes, way))
    got = _marginals(domain.encode(release), domain.sizes, way)
    return np.array([np.abs(a - b).sum() for a, b in zip(ref, got, strict=True)])


@register_metric("marginal_l1_3way", kinds=Kind.TABLE, higher_is_better=False,
                 label="3-way marginal L1 error (AIM's workload)")
def marginal_l1_3way(truth: Table, release: Table) -> float:
    """Average L1 error over all 3-way marginals [MMSM22, Sec. 6.1] (module docstring)."""
    return float(marginal_errors(truth, release, 3).mean())


@register_metric("tvd_1way", kinds=Kind.TABLE, higher_is_better=False,
                 label="1-way marginal TVD")
def tvd_1way(truth: Table, release: Table) -> float:
    """Average total variation distance over all 1-way marginals."""
    return float(0.5 * marginal_errors(truth, release, 1).mean())


@register_metric("tvd_2way", kinds=Kind.TABLE, higher_is_better=False,
                 label="2-way marginal TVD")
def tvd_2way(truth: Table, release: Table) -> float:
    """Average total variation distance over all 2-way marginals."""
    return float(0.5 * marginal_errors(truth, release, 2).mean())
