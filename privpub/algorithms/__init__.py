"""The papers' shared algorithmic building blocks, apart from the engine (types, registry,
ledger, noise, data, store, audit).

- :mod:`privpub.algorithms.dk`          dK-2 series: extraction, repair, generation (sala2011)
- :mod:`privpub.algorithms.clustering`  lower-bounded facility-location clusters (epasto2022)
- :mod:`privpub.algorithms.binary`      binary-matrix checks and cluster releases (epasto2022)
- :mod:`privpub.algorithms.dampening`   local dampening (farias2021 Sec 3-4)
- :mod:`privpub.algorithms.centrality`  egocentric betweenness and its sensitivities (farias2021)
- :mod:`privpub.algorithms.encoding`    a table's public encoding for tree learners
- :mod:`privpub.algorithms.pairwise`    numpy's pairwise summation, compiled

Mechanisms and baselines import from here; nothing here imports a mechanism or a baseline.
"""
