"""privpub: a reproducible benchmark suite for privacy-preserving data publishing.

The core package holds what every paper reproduction shares, each idea in one place:

- :mod:`privpub.types`      graph / table / binary-matrix / histogram types and data *kinds*
- :mod:`privpub.validation` argument checks that fail with clear messages
- :mod:`privpub.noise`      Laplace, geometric, Cauchy and heavy-tailed noise; exponential mechanism
- :mod:`privpub.isotonic`   isotonic regression (constrained inference)
- :mod:`privpub.ledger`     the privacy-budget ledger every DP mechanism spends through
- :mod:`privpub.registry`   the mechanism and metric registries
- :mod:`privpub.data`       dataset registry, loaders and synthetic generators
"""

__version__ = "0.1.0"
