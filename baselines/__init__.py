"""What the papers compare against (randomized response, Mondrian, truncation, flowgraph,
...). Registered exactly like mechanisms, with ``role="baseline"`` (or ``"reference"``), by
the modules listed in :data:`MODULES`."""

#: The modules that register baselines and references, relative to this package.
MODULES = (
    "diffprivlib_tree",
    "dk_pa",
    "dk_reference",
    "edge_removal",
    "flowgraph",
    "hay_constrained",
    "mondrian",
    "mondrian_binary",
    "original_matrix",
    "privatesql",
    "randomized_response",
    "reference",
    "suppression_k_anonymity",
    "truncation",
)
