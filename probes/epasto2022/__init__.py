"""Probes behind epasto2022's notes, one command with a subcommand per deviation:

    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.epasto2022 table1-dblp
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.epasto2022 table1-adult
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.epasto2022 fig3-nonsmooth
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.epasto2022 fig7
    python -m privpub.probes.epasto2022 tradeoff-sbm

- :mod:`~privpub.probes.epasto2022.table1`: readings of the clustering and of the dblp and
  adult matrices behind Table 1, and non-smooth against Mondrian at small k (Fig. 3a/b);
- :mod:`~privpub.probes.epasto2022.fig7`: why the network trained on node-DP randomized
  response scores below the majority rate at small epsilon (Fig. 7);
- :mod:`~privpub.probes.epasto2022.tradeoff`: why smooth suppresses more at small k on the
  stochastic block model (the trade-off figure).

A package rather than one module (as the other papers' probes are) because the three share
nothing but the paper; ``probes/tests/test_epasto2022*.py`` pin what the notes quote.
"""

from __future__ import annotations

import argparse

from . import fig7, table1, tradeoff

__all__ = ["main"]


def main(argv=None) -> None:
    """Parse ``argv`` and run the chosen probe; a bad argument exits 2 with one line."""
    parser = argparse.ArgumentParser(prog="python -m privpub.probes.epasto2022",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="probe", required=True)
    table1.add_table1_parsers(sub)
    fig7.add_fig7_parser(sub)
    tradeoff.add_tradeoff_parser(sub)
    args = parser.parse_args(argv)
    problem = args.check(args)
    if problem:
        parser.error(problem)
    args.run(args)
