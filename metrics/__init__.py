"""Utility metrics. Each module listed in :data:`MODULES` registers ``metric(truth,
release)`` functions with :func:`privpub.registry.register_metric`."""

#: The modules that register metrics, relative to this package.
MODULES = (
    "applications",
    "binary_classification",
    "classification",
    "distributions",
    "dp_equivalence",
    "graph_stats",
    "graph_structure",
    "learners",
    "marginals",
    "matrix_stats",
    "pgb_queries",
    "ranking",
    "sets",
)
