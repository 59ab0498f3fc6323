"""Speed of the privacy audit: every built-in DP configuration, and a 2x bug.

Targets: the quick audit of every built-in DP mechanism (all configurations) in under 2
minutes on 2 cores, the full audit in under 20 minutes, a 2x under-calibrated Laplace
mechanism at epsilon = 1 refuted in under 10 seconds. Prints the table mechanism x
configuration x verdict x lower bound x samples x seconds, the wall times and their ratios
to the targets; ``--json`` keeps every result (with witnesses).

    python benchmarks/bench_audit.py --mode quick --n-jobs 2
    python benchmarks/bench_audit.py --mode full --n-jobs 2 --json /tmp/audit-full.json
    python benchmarks/bench_audit.py --laplace-only --repeat 5
    python benchmarks/bench_audit.py --mode full --release-only   # info fields as diagnostics
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from joblib import Parallel, delayed

from privpub.audit import audit, audit_settings, configurations
from privpub.audit.tests import plugins
from privpub.registry import get_mechanism, mechanisms

TARGETS = {"quick": 120.0, "full": 1200.0, "laplace": 10.0}


def _jobs(names) -> list[tuple[str, dict]]:
    """Every configuration to audit, the slowest mechanisms first (better packing)."""
    infos = mechanisms()
    names = names or sorted(n for n, m in infos.items() if m.is_dp and not n.startswith("toy_"))
    names = sorted(names, key=lambda n: -audit_settings(n).cost_ms)
    return [(n, c) for n in names for c in configurations(infos[n])]


def _one(index: int, name: str, config: dict, mode: str, seed: int,
         release_only: bool) -> tuple[int, dict]:
    plugins.register()
    return index, audit(name, config, mode=mode, seed=seed,
                        diagnostics=True if release_only else ())


def run_all(mode: str, n_jobs: int, seed: int, names, release_only: bool,
            log: str | None) -> tuple[list, float]:
    """Every configuration in parallel; each result is appended to ``log`` (JSON lines) as
    it arrives, and the list comes back in the order of the jobs."""
    jobs = _jobs(names)
    start = time.perf_counter()
    results: list = [None] * len(jobs)
    for i, r in Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")(
        delayed(_one)(i, n, c, mode, seed, release_only) for i, (n, c) in enumerate(jobs)
    ):
        results[i] = r
        print(f"  {time.perf_counter() - start:7.1f} s  {r['mechanism']} {_config_label(r)}: "
              f"{r['verdict']} {r['epsilon_lower_bound']:.3f} ({r['seconds']:.1f} s)",
              flush=True)
        if log:
            with open(log, "a") as fh:
                fh.write(json.dumps(r, default=str) + "\n")
    wall = time.perf_counter() - start
    return sorted(results, key=lambda r: r["mechanism"]), wall


def laplace_time(repeat: int, seed: int) -> list[tuple[float, float, str, float]]:
    """Wall and CPU time of the quick audit of ``toy_audit_laplace`` with half its
    sensitivity, its verdict and bound, per seed."""
    plugins.register()
    get_mechanism("toy_audit_laplace")
    out = []
    for r in range(repeat):
        start = time.perf_counter()
        res = audit("toy_audit_laplace", {"epsilon": 1.0, "sensitivity_factor": 0.5},
                    mode="quick", seed=seed + r)
        out.append((time.perf_counter() - start, res["cpu_seconds"], res["verdict"],
                    res["epsilon_lower_bound"]))
    return out


def _config_label(result: dict) -> str:
    shown = {k: v for k, v in result["params"].items()
             if k in ("degree_bound", "accounting", "criterion", "method", "theta",
                      "theta_max") and v is not None}
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "defaults"


def print_table(results: list[dict]) -> None:
    print("| mechanism | configuration | caveat | verdict | eps lower bound | samples | "
          "seconds | witness statistic |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        wit = r["witness"]
        stat = f"{wit['statistic']} ({wit['pair']['name']})" if wit else ""
        print(f"| {r['mechanism']} | {_config_label(r)} | {'yes' if r['caveat'] else 'no'} | "
              f"{r['verdict']} | {r['epsilon_lower_bound']:.3f} | {r['samples']} | "
              f"{r['seconds']:.1f} | {stat} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("quick", "full"), default="quick")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--names", nargs="*", default=None)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the Laplace timing")
    parser.add_argument("--laplace-only", action="store_true")
    parser.add_argument("--release-only", action="store_true",
                        help="treat every Release.info field as a declared diagnostic")
    parser.add_argument("--json", default=None, help="write every result here")
    parser.add_argument("--log", default=None, help="append each result here as it arrives")
    args = parser.parse_args(argv)

    runs = laplace_time(args.repeat, args.seed)
    med = statistics.median(t for t, _, _, _ in runs)
    med_cpu = statistics.median(c for _, c, _, _ in runs)
    print(f"2x under-calibrated Laplace (quick): median {med:.2f} s wall, {med_cpu:.2f} s CPU "
          f"over {len(runs)} seeds ({med / TARGETS['laplace']:.2f} x the "
          f"{TARGETS['laplace']:.0f} s target); verdicts {[v for _, _, v, _ in runs]}, "
          f"bounds {[round(b, 3) for _, _, _, b in runs]}")
    if args.laplace_only:
        return
    results, wall = run_all(args.mode, args.n_jobs, args.seed, args.names, args.release_only,
                            args.log)
    print_table(results)
    work = sum(r["seconds"] for r in results)
    cpu = sum(r["cpu_seconds"] for r in results)
    target = TARGETS[args.mode]
    print(f"\n{args.mode} audit of {len(results)} configurations: wall {wall:.1f} s on "
          f"{args.n_jobs} jobs ({wall / target:.2f} x the {target:.0f} s target), "
          f"work {work:.1f} s summed over configurations; CPU {cpu:.1f} s, i.e. "
          f"{cpu / args.n_jobs:.1f} s on {args.n_jobs} free cores "
          f"({cpu / args.n_jobs / target:.2f} x the target)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"mode": args.mode, "wall_seconds": wall, "results": results}, fh,
                      indent=1, default=str)


if __name__ == "__main__":
    main()
