"""Probes: analysis code behind the experiments' notes, not mechanisms.

A probe rebuilds a mechanism's exact computation with one part swapped (true leaf counts,
noise off, the paper's reading) or bounds what a published number could be, so the notes
can quote causes that were checked, not guessed (docs/design.md, "Fidelity: the paper's
reading beside ours"). Each paper's probe is one module (epasto2022's a package of three), run as
``python -m privpub.probes.<paper>`` to print the numbers the notes quote on the papers'
data; ``probes/tests`` pin them.

- :mod:`privpub.probes.day2016`: the L1 bound behind Table 2 and the self-loops behind Table 1.
- :mod:`privpub.probes.epasto2022`: readings of smooth k-anonymity and of the dblp / adult
  matrices behind Table 1, non-smooth vs Mondrian (Fig. 3a/b), the classifier below the
  majority rate (Fig. 7) and the SBM's suppression at small k (trade-off).
- :mod:`privpub.probes.farias2021`: the noise-free limits of the PrivTopk variants (Fig. 5),
  the class attribute behind Fig. 6's gains, PSQL's budget split (Table 2).
- :mod:`privpub.probes.qardaji2012`: ablations of RPS (Figs 1-5), the mixture behind Fig. 2c.
- :mod:`privpub.probes.sala2011`: the structure of the Pygmalion graphs (Figs 6-9, Table 1).
- :mod:`privpub.probes.support`: what the probe tests share (the data, a speed script).
"""
