"""The methods the five papers propose. Each module listed in :data:`MODULES` registers its
functions with :func:`privpub.registry.register_mechanism` when it is imported; a new
mechanism is a module here and its name in :data:`MODULES` (a test fails for a registering
module left out). Its facts (caveat, paper section, audit settings, ...) are its
registration's; ``mechanism=<name>`` needs no YAML."""

#: The modules that register mechanisms, relative to this package (imported in this order
#: when every mechanism is needed; a lookup by name imports only the one that registers it).
MODULES = (
    "degree_projection",
    "dgg",
    "diffpid3",
    "dp_dk",
    "drc",
    "ldpgen",
    "priv_hrg",
    "priv_skg",
    "priv_topk",
    "private_pgm",
    "privbayes",
    "privgraph",
    "pygmalion",
    "smooth_k_anonymity",
    "theta_cumulative",
    "theta_histogram",
    "tmf",
    "rps.degree",
    "rps.removal_only",
    "rps.table",
)
