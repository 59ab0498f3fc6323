"""The dK-2 series (joint degree distribution) of sala2011: extraction, repair, generation.

sala2011 (Pygmalion) turns a graph into its dK-2 series, perturbs it and generates a new
graph from the result. This package holds what the dK-2 mechanisms, baselines and metrics
share:

- :mod:`~privpub.algorithms.dk.series`: the dK-2 series of a graph (:func:`joint_degree`), its
  conventions, realizability and distances;
- :mod:`~privpub.algorithms.dk.repair`: a realizable joint degree matrix near a noisy series;
- :mod:`~privpub.algorithms.dk.generate`: a random graph with a given series
  (:func:`generate_graph`, through :mod:`~privpub.algorithms.dk.networkx_port` or
  :mod:`~privpub.algorithms.dk.stub_matching`, both on the hash multiset of
  :mod:`~privpub.algorithms.dk.edge_hash`), and sala2011's graph step (:func:`synthesize`);
- :mod:`~privpub.algorithms.dk.dk_pa`: dK-PA's noisy series, used by a baseline and by Pygmalion.

The choices these modules make and why: docs/design.md (sala2011).
"""

from privpub.algorithms.dk.dk_pa import (
    CAVEAT_DK_PA,
    DK2_CAVEAT_SUMMARY,
    dk_pa_sensitivity,
    dk_pa_series,
)
from privpub.algorithms.dk.generate import (
    GENERATORS,
    NETWORKX_MAX_EDGES,
    GenerationReport,
    check_generator,
    generate_graph,
    synthesize,
)
from privpub.algorithms.dk.networkx_port import joint_degree_graph
from privpub.algorithms.dk.repair import repair_joint_degree
from privpub.algorithms.dk.series import (
    beta_order,
    check_graph,
    dk2_euclidean,
    dk2_l1,
    from_networkx_dict,
    is_realizable,
    joint_degree,
    node_counts,
    stub_totals,
    to_networkx_dict,
)

__all__ = [
    "check_graph",
    "joint_degree",
    "beta_order",
    "stub_totals",
    "node_counts",
    "is_realizable",
    "to_networkx_dict",
    "from_networkx_dict",
    "repair_joint_degree",
    "GenerationReport",
    "generate_graph",
    "dk2_l1",
    "dk2_euclidean",
    "GENERATORS",
    "NETWORKX_MAX_EDGES",
    "check_generator",
    "synthesize",
    "joint_degree_graph",
    "CAVEAT_DK_PA",
    "DK2_CAVEAT_SUMMARY",
    "dk_pa_sensitivity",
    "dk_pa_series",
]
