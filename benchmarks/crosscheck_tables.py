"""Side by side with a second implementation: smartnoise-synth's AIM and MST against privpub's.

smartnoise-synth (``snsynth``, on private-pgm ``mbi`` 1.x) is not part of privpub. Pass an
interpreter that imports it (``--their-python``). Both sides see the SAME discretised table:
privpub's public encoding (:class:`privpub.algorithms.encoding.MarginalDomain`, 32 bins per
numeric attribute, the mechanisms' and the metrics' default) is written as a CSV of codes,
and snsynth gets a transformer fitted on the public domain alone (every code of every
attribute, nothing read from the data), so its domain sizes are privpub's. Their releases
(codes) are decoded by the same domain and both sides are scored by privpub's metrics
(``marginal_l1_3way``, ``tvd_1way``, ``tvd_2way``) against the same original.

For each mechanism, dataset, epsilon and metric it prints both means ± sd, Welch's t and a
flag when the difference is beyond Monte Carlo error (|t| > 3), and the seconds per release
(fit and generation; their interpreter's start-up is not counted).

    python benchmarks/crosscheck_tables.py --their-python PATH/TO/python \\
        --mechanisms mst aim --datasets nltcs --epsilons 1 --repetitions 5 \\
        --aim-max-model-size 1 --aim-max-iters 100

Differences that remain by design, stated in the output: snsynth's noise comes from OpenDP
(unseeded), its AIM estimates with a fixed 1000 iterations (set here by ``--aim-max-iters``
on both sides, by wrapping mbi's ``mirror_descent`` in their process), its AIM's model-size
filter sums the cliques' cells instead of sizing the junction tree, its MST estimates with
the true record count (``known_total``) and 5000 iterations, and it generates as many rows
as the input. ``--their-synthetic sample`` makes their side draw the synthetic records
i.i.d. from the fitted model (mbi's ``method="sample"``) instead of snsynth's default
(mbi 1.x's ``"round"``, whose records carry a dependence the model does not have:
docs/design.md, "AIM and MST").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

METRICS = ("marginal_l1_3way", "tvd_1way", "tvd_2way")
THEIR_NAMES = {"aim": "aim", "mst": "mst"}


# --------------------------------------------------------------------------- their side
def their_side(job: dict) -> None:
    """Run under snsynth's interpreter: fit and sample, save the codes and the time."""
    import warnings

    import pandas as pd

    warnings.simplefilter("ignore")
    import mbi.estimation as estimation
    from snsynth import Synthesizer
    from snsynth.transform import LabelTransformer, TableTransformer

    if job["mechanism"] == "aim" and job["aim_max_iters"]:
        fixed = estimation.mirror_descent

        def mirror_descent(*args, **kwargs):  # their AIM's iterations are a constant
            kwargs["iters"] = job["aim_max_iters"]
            return fixed(*args, **kwargs)

        estimation.mirror_descent = mirror_descent
    codes = pd.read_csv(job["csv"])
    sizes = job["sizes"]
    public = pd.DataFrame({c: np.arange(max(sizes)) % s for c, s in zip(codes.columns, sizes,
                                                                          strict=True)})
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    for rep in range(job["repetitions"]):
        target = out / f"rep{rep}.npz"
        if target.exists():
            continue
        np.random.seed(job["seed"] + rep)  # noqa: NPY002  (mbi draws from it)
        transformer = TableTransformer([LabelTransformer(nullable=False) for _ in sizes])
        transformer.fit(public)
        assert list(transformer.cardinality) == list(sizes)
        kw = {}
        if job["mechanism"] == "aim":
            kw = {"degree": job["aim_degree"], "max_cells": job["aim_max_cells"],
                  "max_model_size": job["aim_max_model_size"], "rounds": job["aim_rounds"]}
        t0 = time.perf_counter()
        synth = Synthesizer.create(THEIR_NAMES[job["mechanism"]], epsilon=job["epsilon"],
                                   delta=job["delta"], **kw)
        synth.fit(codes, transformer=transformer, preprocessor_eps=0.0)
        rows = len(codes)
        # what snsynth's sample() does (mbi's default method is "round"), method chosen
        data = synth.synthesizer.synthetic_data(rows=rows, method=job["synthetic"])
        if job["mechanism"] == "mst":
            data = synth.undo_compress_fn(data)
        seconds = time.perf_counter() - t0
        cols = [f"col{j}" for j in range(len(sizes))]
        # a label transformer fitted on 0..size-1 maps code c to label c: no inverse needed
        release = data.df[cols].to_numpy(dtype=np.int64)
        np.savez_compressed(target, codes=release, seconds=seconds)
        print(f"snsynth {job['mechanism']} eps={job['epsilon']} rep={rep}: {seconds:.1f}s",
              flush=True)


# --------------------------------------------------------------------------- our side
def _mean_sd(values: np.ndarray) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else float("nan")


def _welch(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size < 2 or b.size < 2:
        return float("nan")
    se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    if se == 0:
        return 0.0 if a.mean() == b.mean() else float("inf")
    return float((a.mean() - b.mean()) / se)


def _scores(truth, release) -> dict[str, float]:
    from privpub.registry import get_metric

    return {m: float(get_metric(m).func(truth, release)) for m in METRICS}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--their-python", default=None,
                        help="an interpreter that imports snsynth (smartnoise-synth)")
    parser.add_argument("--mechanisms", nargs="+", default=["mst"], choices=["aim", "mst"])
    parser.add_argument("--datasets", nargs="+", default=["nltcs"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0])
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--aim-degree", type=int, default=3)
    parser.add_argument("--aim-max-cells", type=int, default=10_000)
    parser.add_argument("--aim-max-model-size", type=float, default=80.0)
    parser.add_argument("--aim-max-iters", type=int, default=1000)
    parser.add_argument("--aim-rounds", type=int, default=None,
                        help="AIM's T, which sets the first noise (default 16 d)")
    parser.add_argument("--their-synthetic", choices=["round", "sample"], default="round",
                        help="how their side draws records from the model (snsynth: round)")
    parser.add_argument("--work", default=None, help="where their releases are kept (resumes)")
    parser.add_argument("--out", default=None, help="write the markdown table here too")
    parser.add_argument("--their-side", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.their_side:
        their_side(json.loads(args.their_side))
        return 0
    if not args.their_python or not Path(args.their_python).exists():
        print("crosscheck_tables: --their-python must name an interpreter that imports "
              "snsynth", file=sys.stderr)
        return 2
    if args.repetitions < 1:
        print("crosscheck_tables: --repetitions must be >= 1", file=sys.stderr)
        return 2

    from privpub.algorithms.encoding import MarginalDomain
    from privpub.data import load_dataset
    from privpub.metrics.marginals import METRIC_BINS
    from privpub.registry import get_mechanism

    work = Path(args.work or tempfile.mkdtemp(prefix="crosscheck_tables_"))
    work.mkdir(parents=True, exist_ok=True)
    aim_kw = {"degree": args.aim_degree, "max_cells": args.aim_max_cells,
              "max_model_size": args.aim_max_model_size, "max_iters": args.aim_max_iters,
              "rounds": args.aim_rounds}
    lines = [f"delta {args.delta:g}, {args.repetitions} repetitions, their synthetic records: "
             f"{args.their_synthetic}"]
    if "aim" in args.mechanisms:
        lines.append("AIM on both sides: " + ", ".join(f"{k}={v}" for k, v in aim_kw.items()))
    lines += ["", "| mechanism | data | eps | metric | snsynth (mean ± sd) | privpub (mean ± sd) "
              "| Welch t | beyond MC error |", "|---|---|---|---|---|---|---|---|"]
    timings = ["", "| mechanism | data | eps | snsynth s/release | privpub s/release |",
               "|---|---|---|---|---|"]
    for dataset in args.datasets:
        truth = load_dataset(dataset)
        domain = MarginalDomain.from_table(truth, METRIC_BINS)
        csv = work / f"{dataset}_codes.csv"
        if not csv.exists():
            np.savetxt(csv, domain.encode(truth), fmt="%d", delimiter=",",
                       header=",".join(f"a{j}" for j in range(len(domain.names))),
                       comments="")
        for mech in args.mechanisms:
            func = get_mechanism(mech).func
            kw = aim_kw if mech == "aim" else {}
            for i, eps in enumerate(args.epsilons):
                tag = "_".join(f"{k}{v}" for k, v in kw.items())
                where = work / f"{mech}_{args.their_synthetic}{tag}" / dataset / f"eps{eps:g}"
                job = {"csv": str(csv.resolve()), "sizes": list(domain.sizes),
                       "mechanism": mech, "epsilon": eps, "delta": args.delta,
                       "repetitions": args.repetitions, "seed": 1000 * i,
                       "synthetic": args.their_synthetic, "out": str(where.resolve()),
                       "aim_degree": args.aim_degree, "aim_max_cells": args.aim_max_cells,
                       "aim_max_model_size": args.aim_max_model_size,
                       "aim_max_iters": args.aim_max_iters, "aim_rounds": args.aim_rounds}
                subprocess.run([args.their_python, os.path.abspath(__file__),
                                "--their-side", json.dumps(job)], check=True)
                theirs, ours, t_theirs, t_ours = [], [], [], []
                for rep in range(args.repetitions):
                    z = np.load(where / f"rep{rep}.npz")
                    release = domain.decode(z["codes"], np.random.default_rng([i, rep, 7]))
                    theirs.append(_scores(truth, release))
                    t_theirs.append(float(z["seconds"]))
                    t0 = time.perf_counter()
                    mine = func(truth, epsilon=eps, delta=args.delta,
                                rng=np.random.default_rng([i, rep, 31]), **kw).value
                    t_ours.append(time.perf_counter() - t0)
                    ours.append(_scores(truth, mine))
                    print(f"privpub {mech} {dataset} eps={eps:g} rep={rep}: "
                          f"{t_ours[-1]:.1f}s", flush=True)
                for m in METRICS:
                    a = np.array([r[m] for r in theirs])
                    b = np.array([r[m] for r in ours])
                    (ma, sa), (mb, sb), t = _mean_sd(a), _mean_sd(b), _welch(a, b)
                    flag = "yes" if abs(t) > 3 else ""
                    lines.append(f"| {mech} | {dataset} | {eps:g} | {m} | {ma:.4f} ± {sa:.4f} "
                                 f"| {mb:.4f} ± {sb:.4f} | {t:.1f} | {flag} |")
                timings.append(f"| {mech} | {dataset} | {eps:g} | {np.mean(t_theirs):.1f} "
                               f"| {np.mean(t_ours):.1f} |")
                print("\n".join(lines[-len(METRICS):]), flush=True)
    text = "\n".join(lines + timings) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
