"""Probes: analysis code behind the experiments' notes, not mechanisms.

A probe rebuilds a mechanism's exact computation with one part swapped (true leaf counts,
noise off, the paper's reading) or bounds what a published number could be, so the notes
can quote causes that were checked, not guessed (docs/design.md, "Fidelity: the paper's
reading beside ours"). ``benchmarks/probe_*.py`` print the numbers on the papers' data;
``probes/tests`` pin them.

- :mod:`privpub.probes.qardaji2012`: ablations of the degree-sequence RPS (Figs 4-5).
- :mod:`privpub.probes.day2016`: the L1 bound behind Table 2 and the self-loops behind Table 1.
- :mod:`privpub.probes.support`: what the probe tests share (the benchmark scripts, the data).
"""
