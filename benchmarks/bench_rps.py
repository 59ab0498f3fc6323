"""Speed of RPS (qardaji2012): rps_table on Adult at depth 50 and rps_degree_sequence on
the largest graph available (com-DBLP, 317,080 nodes).

Times the mechanism call only (the data are loaded once, before timing), as the median of
``--repeats`` runs with different seeds, and reports the tree size and released rows.
Targets: < 10 s per Adult run, < 5 s per degree-sequence run.

    PRIVPUB_DATA_DIR=/path/to/data python benchmarks/bench_rps.py [--repeats 3]

Adult is run on the train split (30,162 rows) with all 15 attributes and with the 11
attributes of Sec 4.2 (age, workclass, education, marital-status, occupation, relationship,
race, sex, hours-per-week, native-country, income).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from privpub.data import load_dataset
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.rps.degree import rps_degree_sequence
from privpub.mechanisms.rps.table import rps_table
from privpub.types import Schema, Table

PAPER_ADULT = ("age", "workclass", "education", "marital-status", "occupation",
               "relationship", "race", "sex", "hours-per-week", "native-country", "income")


def paper_adult(table: Table) -> Table:
    """Adult restricted to the 11 attributes qardaji2012 Sec 4.2 uses."""
    attrs = tuple(a for a in table.schema.attributes if a.name in PAPER_ADULT)
    return Table(table.data[list(PAPER_ADULT)], Schema(attrs, table.schema.class_attribute))


def timed(func, data, repeats: int, **kw) -> tuple[float, dict, int]:
    times, info, entries = [], {}, 0
    for seed in range(repeats):
        ledger = PrivacyLedger(kw["epsilon"])
        t0 = time.perf_counter()
        release = func(data, rng=np.random.default_rng(seed), ledger=ledger, **kw)
        times.append(time.perf_counter() - t0)
        info, entries = release.info, len(ledger.entries)
        assert ledger.spent <= kw["epsilon"] * (1 + 1e-9)
    return statistics.median(times), info, entries


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", default=None, help="default: $PRIVPUB_DATA_DIR")
    args = parser.parse_args()

    adult = load_dataset("adult", data_dir=args.data_dir)
    tables = {"adult (15 attr)": adult, "adult (11 attr)": paper_adult(adult)}
    print(f"{'dataset':<18} {'rows':>6} {'settings':<44} {'eps':>5} {'median s':>9} "
          f"{'leaves':>7} {'out rows':>8} {'ledger':>6}")
    settings = [
        {"attributes": "random", "quality": "class", "stop_count": 5},  # Fig 3, count 5
        {"attributes": "random", "quality": "class", "stop_count": 0},  # Fig 3, depth 50
        {"attributes": "all", "quality": "class", "stop_count": 5},
        {"attributes": "all", "quality": "count", "stop_count": 5},
    ]
    for name, table in tables.items():
        for kw in settings:
            for eps in (0.1, 1.0, 10.0):
                s, info, entries = timed(rps_table, table, args.repeats, epsilon=eps, depth=50,
                                         **kw)
                label = ", ".join(f"{k}={v}" for k, v in kw.items())
                print(f"{name:<18} {table.n_rows:>6} {label:<44} {eps:>5g} {s:>9.2f} "
                      f"{info['leaves']:>7} {info['rows']:>8} {entries:>6}")

    print()
    print(f"{'graph':<8} {'nodes':>7} {'edges':>8} {'settings':<40} {'eps':>5} {'median s':>9} "
          f"{'leaves':>7} {'Lambda':>7}")
    for graph_name in ("dblp", "twitter"):
        graph = load_dataset(graph_name, data_dir=args.data_dir)
        for bound in ("max_degree", "n_minus_1"):
            for accounting in ("paper", "strict"):
                for eps in (0.1, 1.0, 10.0):
                    s, info, _ = timed(rps_degree_sequence, graph, args.repeats, epsilon=eps,
                                       degree_bound=bound, accounting=accounting)
                    label = f"degree_bound={bound}, accounting={accounting}"
                    print(f"{graph_name:<8} {graph.n_nodes:>7} {graph.n_edges:>8} {label:<40} "
                          f"{eps:>5g} {s:>9.2f} {info['leaves']:>7} {info['degree_bound']:>7}")


if __name__ == "__main__":
    main()
