"""Time and memory of one release of the table synthesizers (AIM, MST, PrivBayes), with the
marginal errors of that release.

Each (synthesizer, dataset) runs in a fresh process: the first release (which includes
JAX's compilation for AIM and MST, as every leaderboard trial pays it in its own process),
timed, with the process's peak resident memory and the release's ``marginal_l1_3way`` and
``tvd_2way``. Parameters of a synthesizer are given as JSON (``--params aim='{"rounds":
60}'``); the defaults are the mechanisms' own (the papers' settings).

    python benchmarks/bench_table_synthesizers.py --datasets nltcs acs adult --epsilon 1 \\
        --params aim='{"max_model_size": 1, "max_iters": 100}'
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

DEFAULT = ["aim", "mst", "privbayes"]
#: adult as the table_release task loads it (qardaji2012's eleven attributes)
DATASET_OPTIONS = {"adult": {"attributes": "qardaji2012"}}


def one(name: str, dataset: str, epsilon: float, params: dict, seed: int) -> dict:
    """Run in the child: one release, timed, and its marginal errors."""
    import numpy as np

    from privpub.data import load_dataset
    from privpub.metrics.marginals import marginal_l1_3way, tvd_2way
    from privpub.registry import get_mechanism

    table = load_dataset(dataset, **DATASET_OPTIONS.get(dataset, {}))
    func = get_mechanism(name).func
    w, c = time.perf_counter(), time.process_time()
    out = func(table, epsilon=epsilon, rng=np.random.default_rng(seed), **params)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    return {"wall_s": wall, "cpu_s": cpu,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "l1_3way": marginal_l1_3way(table, out.value), "tvd_2way": tvd_2way(table, out.value),
            "info": {k: v for k, v in out.info.items() if k in ("rounds", "degree", "rows")}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["nltcs"])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mechanisms", nargs="+", default=DEFAULT)
    parser.add_argument("--params", nargs="*", default=[],
                        help="NAME=JSON parameters of a synthesizer")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    params = {}
    for item in args.params:
        name, _, text = item.partition("=")
        params[name] = json.loads(text)
    if args.child:
        name, dataset = args.child
        print(json.dumps(one(name, dataset, args.epsilon, params.get(name, {}), args.seed)))
        return 0
    print(f"epsilon {args.epsilon:g}, seed {args.seed}, one release in a fresh process each; "
          f"parameters: {params or 'the defaults'}")
    print("| synthesizer | dataset | wall s | CPU s | peak RSS MB | 3-way L1 | 2-way TVD | "
          "info |")
    print("|---|---|---|---|---|---|---|---|")
    for dataset in args.datasets:
        for name in args.mechanisms:
            proc = subprocess.run(
                [sys.executable, __file__, "--child", name, dataset, "--epsilon",
                 str(args.epsilon), "--seed", str(args.seed), "--params", *args.params],
                capture_output=True, text=True)
            if proc.returncode:
                last = (proc.stderr.strip().splitlines() or ["?"])[-1]
                print(f"| {name} | {dataset} | failed: {last} | | | | | |", flush=True)
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"| {name} | {dataset} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
                  f"{r['peak_rss_mb']:.0f} | {r['l1_3way']:.4f} | {r['tvd_2way']:.4f} | "
                  f"{r['info']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
