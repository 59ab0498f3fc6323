"""Paper claims checked by machine: what an experiment's ``claims:`` say about its figures
and tables, judged ``held`` / ``not held`` / ``not evaluated`` from the result store.

The parts: :mod:`~privpub.experiments.claims.schema` validates the ``claims:`` list before anything
runs, :mod:`~privpub.experiments.claims.select` picks the rows, series and groups a claim speaks of,
:mod:`~privpub.experiments.claims.kinds` judges each kind group by group and
:mod:`~privpub.experiments.claims.verdict` gives the verdicts and summaries. What a claim may say
and
how it is judged (and why): ``docs/claims.md``.
"""

from privpub.experiments.claims.schema import (
    KINDS,
    parse_claims,
    referenced_columns,
    referenced_labels,
)
from privpub.experiments.claims.select import selector_name
from privpub.experiments.claims.verdict import evaluate_claims, noise_free_frame
from privpub.results import VERDICTS

__all__ = [
    "KINDS",
    "VERDICTS",
    "parse_claims",
    "evaluate_claims",
    "referenced_labels",
    "referenced_columns",
    "selector_name",
    "noise_free_frame",
]
