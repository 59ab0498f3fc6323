"""Probes behind day2016's Table 1, Table 2, Fig. 4 and Fig. 5 notes.

    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.day2016
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.day2016 --theta-bin
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.day2016 fig5-oracle
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.day2016 fig4-median
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.day2016 fig4-selection

- Table 2: can any projection produce the L1 the paper prints, given the fraction of edges
  the paper says it keeps? :func:`l1_upper_bound` bounds every raw-count L1 a projection
  keeping that fraction can reach; :func:`table2_bound_cells` checks every published cell.
  Run as a module it prints, for every published cell, the paper's L1 and |E'|/|E| beside
  that bound on the graph's largest connected component (as Table 1): a published L1 above
  it cannot be the L1 Sec 4.2 defines, whatever the projection's details. ``--theta-bin``:
  pi_theta's L1 on Facebook under the three readings of "removing the bin of theta"
  (:func:`theta_bin_readings`).
- Table 1: how many self-loops day2016 counted as edges (:func:`self_loops_in_lcc`); run as
  a module, the self-loops of each raw file, all and inside the largest component, beside
  the paper's edge count minus ours.
- Fig. 5 (``fig5-oracle``): Q-Best against two readings of "Oracle", the per-run one we
  ship (the candidate whose *noisy* release is closest to the truth, chosen after the
  noise) and a fixed one (the candidate of least expected error, chosen before the noise),
  from every candidate's error in the same runs (:func:`fig5_candidate_errors`,
  :func:`oracle_readings`).
- Fig. 4 (``fig4-median``): the two claims read on the median-error run, against the
  run-to-run noise of a median (:func:`fig4_resampled`: bootstrap, and draws of fewer runs)
  and with Truncation's theta chosen on other runs rather than in hindsight
  (:func:`truncation_held_out`), from the experiment's stored runs (``--results``) or fresh
  ones (:func:`fig4_fresh_errors`).
- Fig. 4 (``fig4-selection``): θ-Cumulative's and (θ,Ω)-Histogram's median L1 split at
  their two private steps, the theta choice and the release (:func:`fig4_selection`).

``probes/tests/test_day2016.py`` pins the numbers the notes quote.
"""

from __future__ import annotations

import argparse
import zlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import yaml
from scipy.sparse.csgraph import connected_components

from privpub.data import load_dataset
from privpub.experiments.catalog import CONF_DIR

__all__ = ["l1_upper_bound", "table2_bound_cells", "self_loops_in_lcc", "raw_edges",
           "theta_bin_readings", "THETA_BIN_READINGS", "FIG5_FAMILIES", "CandidateErrors",
           "fig5_candidate_errors", "oracle_readings", "after_noise_share", "fig5_oracle_rows",
           "FIG4_SERIES", "fig4_store_errors", "fig4_fresh_errors", "fig4_medians",
           "fig4_resampled", "truncation_held_out", "fig4_median_rows", "fig4_selection", "main"]

CONF = CONF_DIR / "experiment"
CONFIG = CONF / "day2016_table2.yaml"


def l1_upper_bound(n_nodes: int, n_edges: int, edge_fraction: float, *,
                   rounding: float = 0.005, truncated_at: int | None = None) -> float:
    """The largest raw-count L1 between the degree histograms of a graph and of a subgraph
    keeping ``edge_fraction`` of its edges (printed with ``rounding`` slack);
    ``truncated_at``: Truncation at that theta, which also drops nodes.

    A projection deletes edges (``pi_theta``, Flowgraph, Edge-Removal) or nodes with their
    edges (Truncation) and never adds any. Deleting ``r`` edges changes the degrees of at
    most ``min(2r, |V|)`` nodes, and each changed degree moves one node from one bin to
    another, which changes the raw-count L1 distance of the two degree histograms by at
    most 2. So ``L1(hist(G), hist(G')) <= 2 min(2 r, |V|)`` with
    ``r = |E| - |E'| = (1 - |E'|/|E|) |E|``. With the paper's own ``|E'|/|E|`` (printed to
    two decimals, so ``r <= (1 - f + 0.005) |E|``) this bounds every L1 the paper could
    have measured on the same graph, whatever the projection's details (edge order, ties,
    how bin theta is treated): a published L1 above it cannot be the raw-count L1 of Sec
    4.2 on that graph. Truncation at ``theta`` also removes the nodes of degree ``> theta``
    from the histogram (one count each); each has at least ``theta + 1`` of the ``r``
    removed edges, so at most ``2 r / (theta + 1)`` of them: its bound is
    ``2 min(2 r, |V|) + 2 r / (theta + 1)``.
    """
    removed = min(1.0, max(0.0, 1.0 - edge_fraction + rounding)) * n_edges
    bound = 2.0 * min(2.0 * removed, float(n_nodes))
    if truncated_at is not None:
        bound += 2.0 * removed / (truncated_at + 1)
    return bound


def table2_bound_cells(paper: dict, sizes: dict, *, labels=("T", "FG", "ER", "pi_theta"),
                       thetas=(16, 64, 128)) -> list[dict]:
    """Every published Table 2 cell with its L1 bound.

    ``paper``: ``{dataset: {"l1_counts": [...], "diag/edge_fraction": [...]}}`` in the
    table's order (theta-major, then the labels), as ``conf/experiment/day2016_table2.yaml``
    stores them; ``sizes``: ``{dataset: (|V|, |E|)}``. Returns one dict per cell with
    ``dataset``, ``theta``, ``label``, ``paper_l1``, ``edge_fraction``, ``bound`` and
    ``exceeds`` (the published L1 is above the bound).
    """
    out = []
    for name, rows in paper.items():
        if name not in sizes:
            continue
        n, m = sizes[name]
        cells = [(t, lab) for t in thetas for lab in labels]
        for (theta, label), l1, frac in zip(cells, rows["l1_counts"],
                                            rows["diag/edge_fraction"], strict=True):
            bound = l1_upper_bound(n, m, frac, truncated_at=theta if label == "T" else None)
            out.append({"dataset": name, "theta": theta, "label": label, "paper_l1": l1,
                        "edge_fraction": frac, "bound": bound, "exceeds": l1 > bound})
    return out


# --------------------------------------------------------------------------- Table 1
def raw_edges(name: str) -> np.ndarray:
    """A real graph's edges as stored in its file, self-loops included, in the ids the
    loader starts from (SNAP ids for edge lists, vertex indices for LG files)."""
    from privpub.data import dataset_files, get_dataset_spec
    from privpub.data.readers import read_edge_list, read_lg

    paths = dataset_files(get_dataset_spec(name).name)
    if str(paths[0]).endswith(".jlg"):
        return read_lg(paths[0])[2]
    return read_edge_list(paths[0])[:, :2]


def self_loops_in_lcc(edges) -> tuple[int, int]:
    """``(loops, loops in the largest component)``: the distinct nodes with a self-loop, all
    of them and those inside the largest connected component of the loop-free graph (the
    one day2016's Table 1 describes). day2016 counts these loops as edges; a simple graph
    has none (Table 1's notes)."""
    edges = np.asarray(edges, dtype=np.int64)[:, :2]
    loop = edges[:, 0] == edges[:, 1]
    ids, inverse = np.unique(edges[~loop], return_inverse=True)
    inverse = inverse.reshape(-1, 2)
    k = ids.size
    adjacency = sp.coo_matrix((np.ones(len(inverse)), (inverse[:, 0], inverse[:, 1])),
                              shape=(k, k))
    _, labels = connected_components(adjacency, directed=False)
    lcc_ids = ids[labels == np.argmax(np.bincount(labels))]
    loop_nodes = np.unique(edges[loop, 0])
    return int(loop_nodes.size), int(np.isin(loop_nodes, lcc_ids).sum())


# --------------------------------------------------------------------------- output
def table1() -> None:
    spec = yaml.safe_load((CONF / "day2016_table1.yaml").read_text())
    paper = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"]
    print("| graph | self-loops | inside the LCC | paper |E| | ours (LCC, simple) | paper - ours |")
    print("|---|---|---|---|---|---|")
    for ds in spec["datasets"]:
        name = ds["name"]
        loops, inside = self_loops_in_lcc(raw_edges(name))
        ours = load_dataset(name, lcc=True).n_edges
        print(f"| {name} | {loops} | {inside} | {paper[name][1]:,} | {ours:,} | "
              f"{paper[name][1] - ours:,} |")
    print()

# --------------------------------------------------------------------------- theta bin
# Table 2's pi_theta "after removing the bin of theta": the three readings of the notes on
# Facebook (LCC, lexicographic order, as the experiment): ``--theta-bin``;
# probes/tests/test_day2016.py reruns it.

THETA_BIN_READINGS = ("drop", "zero", "keep")


def theta_bin_readings(graph, thetas=(16, 64, 128)) -> list[dict]:
    """Per theta, the raw-count L1 of pi_theta's histogram under each reading of "removing
    the bin of theta": ``drop`` (bin theta left out of the L1: ``drop_theta_bin=True``),
    ``zero`` (the released bin set to 0, so the true nodes of degree theta count as errors)
    and ``keep`` (the projected bin kept), and |E'|/|E|."""
    import privpub.mechanisms  # noqa: F401 - registers the projections
    from privpub.mechanisms.degree_projection import projection_edge_addition
    from privpub.metrics.distributions import l1_counts
    from privpub.types import DegreeHistogram

    truth = DegreeHistogram(np.bincount(graph.degrees()).astype(float))
    rows = []
    for theta in thetas:
        keep = projection_edge_addition(graph, theta=theta, rng=None)
        drop = projection_edge_addition(graph, theta=theta, drop_theta_bin=True, rng=None)
        zero = np.asarray(keep.value.counts, dtype=float).copy()
        zero[theta] = 0.0
        rows.append({
            "theta": theta,
            "drop": l1_counts(truth, drop.value),
            "zero": l1_counts(truth, DegreeHistogram(zero)),
            "keep": l1_counts(truth, keep.value),
            "edge_fraction": keep.diagnostics["edge_fraction"],
        })
    return rows


def theta_bin_main(name: str = "facebook") -> None:
    spec = yaml.safe_load(CONFIG.read_text())
    paper = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"][name]
    graph = load_dataset(name, lcc=True)
    print(f"{name} (LCC): pi_theta's L1 under three readings of 'removing the bin of theta'")
    print("| theta | paper L1 | drop (ours) | bin set to 0 | bin kept | paper |E'|/|E| | ours |")
    print("|---|---|---|---|---|---|---|")
    for i, r in enumerate(theta_bin_readings(graph)):
        p_l1 = paper["l1_counts"][4 * i + 3]  # pi_theta is the 4th column of each theta
        p_f = paper["diag/edge_fraction"][4 * i + 3]
        print(f"| {r['theta']} | {p_l1:,} | " + " | ".join(
            f"{r[k]:,.0f} ({r[k] - p_l1:+,.0f})" for k in THETA_BIN_READINGS)
            + f" | {p_f:.2f} | {r['edge_fraction']:.3f} |")


# --------------------------------------------------------------------------- Fig. 5 oracles
# Fig. 5's "Oracle" under two readings, beside Q-Best and the private method, from one
# matrix of every candidate's L1 error per run: ``fig5-oracle``; probes/tests/test_day2016.py
# reruns a small version.

#: The two Fig. 5 families: Algorithm 2's (theta, Omega) candidates and Algorithm 4's thetas.
FIG5_FAMILIES = ("hist", "cumulative")


@dataclass(frozen=True)
class CandidateErrors:
    """Every candidate's L1 error in each of ``runs`` independent releases of one family.

    ``errors[r, c]``: L1 distance between the true degree distribution and candidate ``c``'s
    noisy, post-processed release in run ``r`` (normalised, as Fig. 5 plots); ``quality``:
    the family's quality function per candidate (Eq. (1) or ``q^c``, on the true graph);
    ``sensitivity`` and ``epsilon1``: its exponential mechanism's; ``thetas``: each
    candidate's theta."""

    errors: np.ndarray
    quality: np.ndarray
    sensitivity: float
    epsilon1: float
    thetas: np.ndarray


def fig5_candidate_errors(graph, epsilon: float, *, family: str, runs: int, rng,
                          theta_max: int = 200, tail: str = "linear") -> CandidateErrors:
    """The L1 error of every candidate of ``family`` in ``runs`` releases (day2016 Sec 4.4).

    Each run draws the noise exactly as the shipped Oracle does (one Laplace vector for all
    ``(theta, Omega)`` candidates of Algorithm 2; one per theta, in order, for Algorithm 4),
    so run 0's least error is the shipped Oracle's L1 for the same ``rng``. The selections
    differ only in which column they read: the per-run Oracle the row's least, Q-Best the
    argmax of ``quality``, a fixed Oracle one column for all runs. A release with no
    positive count scores 2, as the ``l1`` metric scores it.
    """
    from privpub.mechanisms.degree_projection import cumhist_sensitivity, projection_profile
    from privpub.mechanisms.degree_tail import tail_code
    from privpub.mechanisms.theta_cumulative import (
        EPSILON1_FRACTION,
        _l1_distributions,
        _release,
        cumulative_quality,
        cumulative_quality_sensitivity,
        folded_cumulative,
    )
    from privpub.mechanisms.theta_histogram import (
        _candidates,
        _oracle_errors,
        folded_histograms,
        histogram_quality,
        histogram_quality_sensitivity,
    )
    from privpub.noise import laplace_noise

    if family not in FIG5_FAMILIES:
        raise ValueError(f"family must be one of {FIG5_FAMILIES}, got {family!r}")
    epsilon1 = EPSILON1_FRACTION * epsilon  # both modules split 0.1 / 0.9 (Sec 4.1)
    epsilon2 = epsilon - epsilon1
    profile = projection_profile(graph, theta_max)
    truth = graph.degree_histogram().distribution()
    if family == "hist":
        thetas, _, offsets, starts = _candidates(theta_max)
        bins, code = folded_histograms(profile), tail_code(tail)
        errors = np.stack([
            _oracle_errors(bins, thetas, offsets, starts,
                           laplace_noise(sensitivity=1.0, epsilon=1.0, rng=rng, size=starts.size),
                           epsilon2, code, truth)
            for _ in range(runs)])
        errors[~np.isfinite(errors)] = 2.0
        return CandidateErrors(errors, histogram_quality(profile, epsilon2),
                               histogram_quality_sensitivity(theta_max), epsilon1, thetas)
    thetas = np.arange(1, theta_max + 1)
    errors = np.empty((runs, theta_max))
    for r in range(runs):
        for theta in thetas:
            noisy = folded_cumulative(profile, theta) + laplace_noise(
                sensitivity=cumhist_sensitivity(theta), epsilon=epsilon2, rng=rng, size=theta)
            errors[r, theta - 1] = _l1_distributions(
                truth, _release(noisy, theta, tail, "extract").counts)
    errors[~np.isfinite(errors)] = 2.0
    return CandidateErrors(errors, cumulative_quality(profile, epsilon2),
                           cumulative_quality_sensitivity(theta_max), epsilon1, thetas)


def oracle_readings(select: CandidateErrors, evaluate: CandidateErrors) -> dict:
    """Mean L1 of each Fig. 5 selection over the runs of ``evaluate``.

    - ``per_run_oracle``: per run, the candidate whose noisy release is closest to the truth
      (chosen after the noise; the shipped ``*_oracle``).
    - ``fixed_oracle``: the one candidate with the least mean error over the *other* runs,
      ``select`` (chosen before the noise, per graph and epsilon), evaluated on
      ``evaluate``: an estimate from above of the best fixed candidate's expected error.
      ``fixed_in_sample``: the least mean error over all runs of both, an estimate from
      below (the least of many noisy means is biased low).
    - ``qbest``: the argmax of the quality function (the shipped ``*_qbest``).
    - ``private``: the exponential mechanism's expected error, ``sum_c P[c] mean_c``
      (the shipped private method, its selection averaged exactly).

    Also the thetas of Q-Best and of the fixed Oracle, and ``qbest_fixed_se``: the standard
    error of the mean of Q-Best's error minus the fixed Oracle's (same runs, paired).
    """
    from privpub.noise import exponential_mechanism_probabilities

    mean = evaluate.errors.mean(axis=0)
    qbest = int(np.argmax(evaluate.quality))
    chosen = select.errors.mean(axis=0)
    fixed = int(np.argmin(chosen))
    n_sel, runs = select.errors.shape[0], evaluate.errors.shape[0]
    pooled = (n_sel * chosen + runs * mean) / (n_sel + runs)
    p = exponential_mechanism_probabilities(evaluate.quality, sensitivity=evaluate.sensitivity,
                                            epsilon=evaluate.epsilon1)
    return {
        "private": float(p @ mean),
        "qbest": float(mean[qbest]),
        "fixed_oracle": float(mean[fixed]),
        "fixed_in_sample": float(pooled.min()),
        "per_run_oracle": float(evaluate.errors.min(axis=1).mean()),
        "qbest_theta": int(evaluate.thetas[qbest]),
        "fixed_theta": int(evaluate.thetas[fixed]),
        "qbest_fixed_se": float(
            (evaluate.errors[:, qbest] - evaluate.errors[:, fixed]).std(ddof=1) / np.sqrt(runs))
        if runs > 1 else float("nan"),
    }


def after_noise_share(r: dict, fixed: str = "fixed_oracle") -> float:
    """The share of the gap between Q-Best and the per-run Oracle that lies between the two
    Oracle readings: the part "choosing after the noise" accounts for (1 = all of it)."""
    gap = r["qbest"] - r["per_run_oracle"]
    return (r[fixed] - r["per_run_oracle"]) / gap if gap > 0 else float("nan")


def fig5_oracle_rows(names, epsilons, *, runs: int = 30, select_runs: int = 100,
                     seed: int = 0, families=FIG5_FAMILIES, theta_max: int = 200) -> list[dict]:
    """:func:`oracle_readings` for every graph (LCC), epsilon and family: ``select_runs``
    runs to choose the fixed Oracle and ``runs`` others to evaluate every selection. Each
    cell's noise comes from its own seed ``(seed, graph, epsilon, family)``, so any subset
    of cells gives the same numbers."""
    rows = []
    for name in names:
        graph = load_dataset(name, lcc=True)
        for eps in epsilons:
            for family in families:
                rng = np.random.default_rng([seed, zlib.crc32(name.encode()),
                                             int(round(1000 * eps)), FIG5_FAMILIES.index(family)])
                sel, ev = (fig5_candidate_errors(graph, eps, family=family, runs=n, rng=rng,
                                                 theta_max=theta_max)
                           for n in (select_runs, runs))
                rows.append({"dataset": name, "epsilon": eps, "family": family,
                             **oracle_readings(sel, ev)})
    return rows


def _within(a, b, tol):
    return a <= (1 + tol) * b


def fig5_oracle_main(args) -> None:
    spec = yaml.safe_load((CONF / "day2016_fig5.yaml").read_text())
    names = args.datasets or [d["name"] for d in spec["datasets"]]
    epsilons = args.epsilons or spec["grid"]["epsilon"]
    rows = fig5_oracle_rows(names, epsilons, runs=args.runs, select_runs=args.select_runs,
                            seed=args.seed, families=args.families, theta_max=args.theta_max)
    titles = {"hist": ("(θ,Ω)", 0.1), "cumulative": ("θ", 0.2)}
    for family in args.families:
        rs = [r for r in rows if r["family"] == family]
        label, tol = titles[family]
        print(f"\n{label}: mean L1 over {args.runs} runs; fixed Oracle chosen on "
              f"{args.select_runs} other runs (in-sample: the least mean over all runs)")
        print("| graph | ε | private | Q-Best (θ) | fixed Oracle (θ) | in-sample | per-run Oracle "
              "| Q-Best / fixed | Q-Best / per-run | after-noise share |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rs:
            print(f"| {r['dataset']} | {r['epsilon']} | {r['private']:.3f} | {r['qbest']:.3f} "
                  f"({r['qbest_theta']}) | {r['fixed_oracle']:.3f} ({r['fixed_theta']}) | "
                  f"{r['fixed_in_sample']:.3f} | {r['per_run_oracle']:.3f} | "
                  f"{r['qbest'] / r['fixed_oracle']:.2f} | "
                  f"{r['qbest'] / r['per_run_oracle']:.2f} | {after_noise_share(r):.2f} |")
        n = len(rs)
        subject = "Q-Best" if family == "hist" else "θ-Cumulative (private)"
        key = "qbest" if family == "hist" else "private"
        print(f"\n{label}: {subject} within {tol:.0%} of each Oracle reading (of {n} groups):")
        for ref in ("per_run_oracle", "fixed_oracle", "fixed_in_sample"):
            ratios = np.array([r[key] / r[ref] for r in rs])
            print(f"- {ref}: {int(sum(_within(r[key], r[ref], tol) for r in rs))}; "
                  f"ratio {ratios.min():.2f}-{ratios.max():.2f} (median {np.median(ratios):.2f})")
        missed = [r for r in rs if not _within(r["qbest"], r["fixed_oracle"], tol)]
        noise = sum(r["qbest"] - (1 + tol) * r["fixed_oracle"] <= 2 * r["qbest_fixed_se"]
                    for r in missed)
        print(f"- Q-Best within {tol:.0%} of fixed_oracle: {n - len(missed)}; of the "
              f"{len(missed)} others, {noise} within two standard errors (paired)")
        shares = np.array([after_noise_share(r) for r in rs])
        low = np.array([after_noise_share(r, "fixed_in_sample") for r in rs])
        print(f"- share of the Q-Best / per-run gap from choosing after the noise: median "
              f"{np.nanmedian(shares):.2f} (held-out), {np.nanmedian(low):.2f} (in-sample)")
        print(f"| graph | median after-noise share | Q-Best / fixed (range) | Q-Best within "
              f"{tol:.0%} of fixed | private within {tol:.0%} of fixed |")
        print("|---|---|---|---|---|")
        for name in names:
            gr = [r for r in rs if r["dataset"] == name]
            q = [r["qbest"] / r["fixed_oracle"] for r in gr]
            near = {k: sum(_within(r[k], r["fixed_oracle"], tol) for r in gr)
                    for k in ("qbest", "private")}
            print(f"| {name} | {np.nanmedian([after_noise_share(r) for r in gr]):.2f} | "
                  f"{min(q):.2f}-{max(q):.2f} | {near['qbest']} of {len(gr)} | "
                  f"{near['private']} of {len(gr)} |")


# --------------------------------------------------------------------------- Fig. 4 median run
# Fig. 4's two claims, read on the run with the median L1 error: how far each verdict is
# from flipping under the run-to-run noise, and what choosing Truncation's theta in
# hindsight adds: ``fig4-median``; probes/tests/test_day2016.py reruns a small version.

#: Fig. 4's series (the experiment's labels) and the registered mechanism of each.
FIG4_SERIES = {"(θ,Ω)-Histogram": "theta_omega_histogram",
               "θ-Cumulative": "theta_cumulative_histogram",
               "θ-Constrained": "theta_constrained",
               "Flowgraph": "flowgraph",
               "Truncation": "truncation"}
#: The series tuned in hindsight (its theta with the least error, day2016 Sec 4.1).
FIG4_TUNED = "Truncation"


def fig4_store_errors(store_dir) -> dict[str, dict[str, dict]]:
    """Every run's L1 error in an experiment store (``<results_dir>/day2016_fig4/<scale>/
    store``): ``{dataset: {label: {theta: errors by repetition}}}``, ``theta`` None for the
    series without one; noise-free twins and the truth left out."""
    from privpub.experiments.store import ResultStore

    rows = ResultStore(store_dir).load()
    if rows.empty:
        from privpub.errors import ConfigError

        raise ConfigError(f"no results in {store_dir}")
    rows = rows[(rows["metric"] == "l1") & ~rows["noise_free"].fillna(False).astype(bool)
                & rows["label"].isin(list(FIG4_SERIES))]
    out: dict[str, dict[str, dict]] = {}
    for (dataset, label), group in rows.groupby(["dataset", "label"], sort=True):
        thetas = group["theta"] if label == FIG4_TUNED else None
        cells = group.groupby(thetas.astype(int)) if thetas is not None else [(None, group)]
        out.setdefault(dataset, {})[label] = {
            (None if t is None else int(t)): g.sort_values("rep")["value"].to_numpy(float)
            for t, g in cells}
    return out


def fig4_fresh_errors(graph, *, runs: int, rng, labels=tuple(FIG4_SERIES),
                      thetas=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
                      epsilon: float = 1.0) -> dict[str, dict]:
    """``runs`` releases of each series of ``labels`` on ``graph`` with the registered
    mechanisms at their defaults (Truncation at each ``theta < |V|``), scored by the ``l1``
    metric: ``{label: {theta: errors}}`` as :func:`fig4_store_errors` gives per dataset.
    Fresh noise (not the experiment's seeds): the same distribution of errors."""
    import privpub.baselines  # noqa: F401 - registers Flowgraph and Truncation
    import privpub.mechanisms  # noqa: F401
    from privpub.registry import get_mechanism, get_metric

    truth, l1 = graph.degree_histogram(), get_metric("l1").func
    out: dict[str, dict] = {}
    for label in labels:
        func = get_mechanism(FIG4_SERIES[label]).func
        grid = [t for t in thetas if t < graph.n_nodes] if label == FIG4_TUNED else [None]
        out[label] = {
            t: np.array([l1(truth, func(graph, epsilon=epsilon, rng=rng,
                                        **({} if t is None else {"theta": t})).value)
                         for _ in range(runs)])
            for t in grid}
    return out


def _tuned(cells: dict, stat=np.median) -> tuple:
    """``(theta, median)`` of the tuned series: the theta whose ``stat`` over the runs is
    least, and the median there."""
    theta = min(cells, key=lambda t: (stat(cells[t]), t))
    return theta, float(np.median(cells[theta]))


def fig4_medians(errors: dict[str, dict], *, stat=np.median) -> dict:
    """Each series' median L1 over its runs, as the claims read Fig. 4 (``stat: median``):
    the tuned series at the theta whose ``stat`` is least (``means``: each series' mean L1,
    the tuned one's least over theta); ``cumulative_best`` and
    ``flowgraph_beats_truncation``: the two claims' verdicts in this graph."""
    values, means, theta = {}, {}, None
    for label, cells in errors.items():
        if label == FIG4_TUNED:
            theta, values[label] = _tuned(cells, stat)
            means[label] = min(float(np.mean(e)) for e in cells.values())
        else:
            values[label] = float(np.median(cells[None]))
            means[label] = float(np.mean(cells[None]))
    best = min(values, key=values.get)
    return {"values": values, "means": means, "theta": theta, "best": best,
            "cumulative_best": best == "θ-Cumulative",
            "flowgraph_beats_truncation": (values["Flowgraph"] < values[FIG4_TUNED]
                                           if {"Flowgraph", FIG4_TUNED} <= set(values)
                                           else None)}


def fig4_resampled(errors: dict[str, dict], *, rng, resamples: int = 2000,
                   runs: int | None = None) -> dict:
    """How often each verdict of :func:`fig4_medians` holds when every cell's runs are drawn
    again: with replacement (a bootstrap of the median over the same number of runs), or,
    with ``runs``, ``runs`` of them without replacement (what a smaller experiment would
    have seen). Truncation's theta is chosen again in each draw (in hindsight, as the
    claim does). Returns the shares of draws in which each claim holds."""
    held = {"cumulative_best": 0, "flowgraph_beats_truncation": 0}
    for _ in range(resamples):
        draw = {}
        for label, cells in errors.items():
            draw[label] = {}
            for t, e in cells.items():
                idx = (rng.integers(0, e.size, e.size) if runs is None
                       else rng.choice(e.size, size=min(runs, e.size), replace=False))
                draw[label][t] = e[idx]
        m = fig4_medians(draw)
        held["cumulative_best"] += m["cumulative_best"]
        held["flowgraph_beats_truncation"] += bool(m["flowgraph_beats_truncation"])
    return {k: v / resamples for k, v in held.items()}


def truncation_held_out(cells: dict) -> dict:
    """Truncation's median L1 with its theta chosen on other runs: the runs split into the
    even and the odd repetitions, theta chosen (least median) on one half and its median
    read on the other, both ways, averaged (``held_out``); beside the same halves' least
    median over theta (``in_sample``: chosen in hindsight) and the theta of least mean over
    all runs (the figure's choice, ``mean_theta``) with its median."""
    halves = [{t: e[i::2] for t, e in cells.items()} for i in (0, 1)]
    held, inside = [], []
    for a, b in ((0, 1), (1, 0)):
        theta, _ = _tuned(halves[a])
        held.append(float(np.median(halves[b][theta])))
        inside.append(_tuned(halves[b])[1])
    mean_theta, at_mean = _tuned(cells, np.mean)
    return {"held_out": float(np.mean(held)), "in_sample": float(np.mean(inside)),
            "mean_theta": mean_theta, "at_mean_theta": at_mean}


def fig4_median_rows(errors: dict[str, dict[str, dict]], *, seed: int = 0,
                     resamples: int = 2000, subsample: int | None = 9) -> list[dict]:
    """Per dataset: :func:`fig4_medians`, the bootstrap shares of :func:`fig4_resampled`,
    the shares over draws of ``subsample`` runs (if fewer than the runs held) and, when
    Truncation is there, :func:`truncation_held_out` and ``spread``, the least and largest
    of its runs at its theta. Each dataset's draws come from its
    own seed ``(seed, dataset)``."""
    rows = []
    for name, errs in errors.items():
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        n = min(e.size for cells in errs.values() for e in cells.values())
        row = {"dataset": name, "runs": n, **fig4_medians(errs),
               "bootstrap": fig4_resampled(errs, rng=rng, resamples=resamples)}
        if subsample and subsample < n:
            row["subsample"] = fig4_resampled(errs, rng=rng, resamples=resamples,
                                              runs=subsample)
        if FIG4_TUNED in errs:
            row.update(truncation_held_out(errs[FIG4_TUNED]))
            at = errs[FIG4_TUNED][row["theta"]]
            row["spread"] = (float(at.min()), float(at.max()))
        rows.append(row)
    return rows


def fig4_median_main(args) -> None:
    if args.results:
        from privpub.experiments.runner import store_dir

        errors = fig4_store_errors(store_dir(args.results, "day2016_fig4", args.scale) / "store")
        if args.datasets:
            errors = {k: v for k, v in errors.items() if k in args.datasets}
        source = f"the experiment's runs ({args.results}, scale={args.scale})"
    else:
        spec = yaml.safe_load((CONF / "day2016_fig4.yaml").read_text())
        names = args.datasets or [d["name"] for d in spec["datasets"]]
        thetas = next(m for m in spec["mechanisms"] if m["label"] == FIG4_TUNED)["grid"]["theta"]
        rng = np.random.default_rng(args.seed)
        errors = {name: fig4_fresh_errors(load_dataset(name, lcc=True), runs=args.runs,
                                          rng=rng, thetas=thetas) for name in names}
        source = f"{args.runs} fresh runs per series (seed {args.seed})"
    rows = fig4_median_rows(errors, seed=args.seed, resamples=args.resamples,
                            subsample=args.subsample)
    labels = [lab for lab in FIG4_SERIES if lab != FIG4_TUNED]
    print(f"day2016 Fig. 4: median L1 over {source}; P = share of {args.resamples} "
          f"bootstrap resamples of the runs in which the claim holds"
          + (f"; P{args.subsample} = the same over draws of {args.subsample} runs"
             if args.subsample else ""))
    print("| graph | runs | " + " | ".join(labels) + " | Truncation (θ) | best | "
          f"θ-Cumulative best: P | P{args.subsample} | θ-Cumulative / best other: median | "
          "mean |")
    print("|---|---|" + "---|" * (len(labels) + 7))
    for r in rows:
        v, sub = r["values"], r.get("subsample", {})
        ratios = [r[k]["θ-Cumulative"] / min(x for lab, x in r[k].items() if lab != "θ-Cumulative")
                  if "θ-Cumulative" in r[k] and len(r[k]) > 1 else float("nan")
                  for k in ("values", "means")]
        print(f"| {r['dataset']} | {r['runs']} | "
              + " | ".join(f"{v[lab]:.3f}" if lab in v else "-" for lab in labels)
              + f" | {v.get(FIG4_TUNED, float('nan')):.3f} ({r['theta']}) | {r['best']} | "
              f"{r['bootstrap']['cumulative_best']:.2f} | "
              f"{sub.get('cumulative_best', float('nan')):.2f} | {ratios[0]:.2f} | "
              f"{ratios[1]:.2f} |")
    print("\nTruncation worst (Flowgraph below Truncation at its theta of least median L1): "
          "Truncation's theta chosen in hindsight, on other runs, and by least mean")
    print(f"| graph | runs | Flowgraph | Truncation, in hindsight (θ) | held: P | "
          f"P{args.subsample} | "
          "halves: in hindsight | halves: θ chosen on the other half | least mean (θ) | "
          "Truncation's runs at its θ: min-max |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if FIG4_TUNED not in r["values"] or "Flowgraph" not in r["values"]:
            continue
        v, sub = r["values"], r.get("subsample", {})
        print(f"| {r['dataset']} | {r['runs']} | {v['Flowgraph']:.3f} | {v[FIG4_TUNED]:.3f} "
              f"({r['theta']}) | {r['bootstrap']['flowgraph_beats_truncation']:.2f} | "
              f"{sub.get('flowgraph_beats_truncation', float('nan')):.2f} | "
              f"{r['in_sample']:.3f} | {r['held_out']:.3f} | {r['at_mean_theta']:.3f} "
              f"({r['mean_theta']}) | {r['spread'][0]:.2f}-{r['spread'][1]:.2f} |")
    for key, what in (("cumulative_best", "θ-Cumulative best"),
                      ("flowgraph_beats_truncation", "Flowgraph below Truncation")):
        judged = [r for r in rows if r[key] is not None]
        held = sum(bool(r[key]) for r in judged)
        print(f"- {what}: held in {held} of {len(judged)} graphs")


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The lower median of ``values`` under ``weights`` (summing to 1)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    return float(values[order][min(np.searchsorted(cum, 0.5), cum.size - 1)])


def fig4_selection(graph, epsilon: float = 1.0, *, runs: int, rng, theta_max: int = 200,
                   family: str = "cumulative") -> dict:
    """Fig. 4's median L1 of one family's mechanism split at its two private steps (day2016
    Sec 3.2-3.3, 4.1): the parameter choice (exponential mechanism, ``0.1 epsilon``) and the
    release (the rest of the budget), from every candidate's error in ``runs`` releases
    (:func:`fig5_candidate_errors`).

    - ``private``: the median of the shipped private method's L1, its choice averaged
      exactly (the errors of every candidate weighted by its selection probability).
    - ``qbest`` (``qbest_theta``): the candidate of greatest quality, chosen non-privately
      (the shipped ``*_qbest``): what the choice's noise costs is ``private - qbest``.
    - ``best`` (``best_theta``): the candidate of least median over these runs (in
      hindsight, so an estimate from below): what the quality function's choice costs is
      ``qbest - best``; ``best`` itself is the release step's error at its best.
    - ``theta_quantiles``: the 10/50/90% quantiles of the theta the private choice picks;
      ``near_best``: its chance of picking a candidate within 10% of ``best``.
    - ``noise_free``: the noise-free limit at ``qbest_theta`` (:func:`privpub.noise.noise_off`).
    - for ``family="hist"``, ``singletons``: the median at ``qbest_theta`` with no grouping
      (``Omega`` of singleton bins), the release without ``Omega``'s averaging.
    """
    from privpub.noise import exponential_mechanism_probabilities, noise_off

    ce = fig5_candidate_errors(graph, epsilon, family=family, runs=runs, rng=rng,
                               theta_max=theta_max)
    p = exponential_mechanism_probabilities(ce.quality, sensitivity=ce.sensitivity,
                                            epsilon=ce.epsilon1)
    medians = np.median(ce.errors, axis=0)
    qbest, best = int(np.argmax(ce.quality)), int(np.argmin(medians))
    private = _weighted_median(ce.errors.ravel(), np.repeat(p[None, :] / runs, runs, 0).ravel())
    order = np.argsort(ce.thetas, kind="stable")
    cum = np.cumsum(p[order])
    quantiles = tuple(int(ce.thetas[order][min(np.searchsorted(cum, q), cum.size - 1)])
                      for q in (0.1, 0.5, 0.9))
    with noise_off():
        free = fig5_candidate_errors(graph, epsilon, family=family, runs=1, rng=rng,
                                     theta_max=theta_max).errors[0]
    out = {"family": family, "runs": runs, "private": private,
           "qbest": float(medians[qbest]), "qbest_theta": int(ce.thetas[qbest]),
           "best": float(medians[best]), "best_theta": int(ce.thetas[best]),
           "theta_quantiles": quantiles,
           "near_best": float(p[medians <= 1.1 * medians[best]].sum()),
           "noise_free": float(free[qbest])}
    if family == "hist":
        from privpub.mechanisms.theta_histogram import _candidates

        _, ratios, _, _ = _candidates(theta_max)
        single = int(np.flatnonzero((ce.thetas == ce.thetas[qbest]) & (ratios == 1.0))[0])
        out["singletons"] = float(medians[single])
        out["singletons_noise_free"] = float(free[single])
    return out


def fig4_selection_main(args) -> None:
    for name in args.datasets:
        graph = load_dataset(name, lcc=True)
        print(f"day2016 Fig. 4, {name} at ε = {args.epsilon}: median L1 over {args.runs} "
              f"runs of every candidate (seed {args.seed}), split at the two private steps")
        print("| series | private | Q-Best (θ) | best fixed, in hindsight (θ) | private θ: "
              "10/50/90% | P(within 10% of best) | noise-free at Q-Best's θ | "
              "no grouping at Q-Best's θ (noise-free) |")
        print("|---|---|---|---|---|---|---|---|")
        for family, label in (("cumulative", "θ-Cumulative"), ("hist", "(θ,Ω)-Histogram")):
            rng = np.random.default_rng([args.seed, zlib.crc32(name.encode()),
                                         FIG5_FAMILIES.index(family)])
            r = fig4_selection(graph, args.epsilon, runs=args.runs, rng=rng, family=family)
            single = (f"{r['singletons']:.3f} ({r['singletons_noise_free']:.3f})"
                      if "singletons" in r else "-")
            print(f"| {label} | {r['private']:.3f} | {r['qbest']:.3f} ({r['qbest_theta']}) | "
                  f"{r['best']:.3f} ({r['best_theta']}) | "
                  + "/".join(map(str, r["theta_quantiles"]))
                  + f" | {r['near_best']:.2f} | {r['noise_free']:.3f} | {single} |")


def table2_main() -> None:
    table1()
    spec = yaml.safe_load(CONFIG.read_text())
    paper = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"]
    sizes = {}
    for ds in spec["datasets"]:
        graph = load_dataset(ds["name"], lcc=True)
        sizes[ds["name"]] = (graph.n_nodes, graph.n_edges)
    cells = table2_bound_cells(paper, sizes)
    print("| graph | |V| | |E| | theta | projection | paper |E'|/|E| | paper L1 | largest "
          "possible L1 | paper above it |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in cells:
        n, m = sizes[c["dataset"]]
        print(f"| {c['dataset']} | {n:,} | {m:,} | {c['theta']} | {c['label']} | "
              f"{c['edge_fraction']:.2f} | {c['paper_l1']:,} | {c['bound']:,.0f} | "
              f"{'**yes**' if c['exceeds'] else 'no'} |")
    bad = [c for c in cells if c["exceeds"]]
    print(f"\n{len(bad)} of {len(cells)} published L1 values exceed the largest L1 their own "
          "|E'|/|E| allows: " + ", ".join(f"{c['dataset']} theta={c['theta']} {c['label']}"
                                          for c in bad))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m privpub.probes.day2016",
        description="day2016 probes: Tables 1-2 (no subcommand), --theta-bin, fig5-oracle, "
                    "fig4-median, fig4-selection.")
    parser.add_argument("--theta-bin", action="store_true",
                        help="pi_theta's L1 on Facebook under three readings of bin theta")
    sub = parser.add_subparsers(dest="command")
    fig5 = sub.add_parser("fig5-oracle", help="Fig. 5: Q-Best against two Oracle readings")
    fig5.add_argument("--datasets", nargs="+", help="default: the experiment's 8 graphs")
    fig5.add_argument("--epsilons", nargs="+", type=float, help="default: its epsilon grid")
    fig5.add_argument("--families", nargs="+", choices=FIG5_FAMILIES,
                      default=list(FIG5_FAMILIES))
    fig5.add_argument("--runs", type=int, default=30, help="runs to evaluate (the experiment's 30)")
    fig5.add_argument("--select-runs", type=int, default=100,
                      help="other runs to choose the fixed Oracle on")
    fig5.add_argument("--seed", type=int, default=0)
    fig5.add_argument("--theta-max", type=int, default=200)
    fig4 = sub.add_parser("fig4-median",
                          help="Fig. 4: the median-run claims against the run-to-run noise")
    fig4.add_argument("--results", help="a results_dir holding the day2016_fig4 experiment "
                      "(default: fresh runs of the mechanisms)")
    fig4.add_argument("--scale", default="paper", help="the scale of the stored run")
    fig4.add_argument("--datasets", nargs="+", help="default: the experiment's 8 graphs")
    fig4.add_argument("--runs", type=int, default=30, help="fresh runs per series")
    fig4.add_argument("--resamples", type=int, default=2000)
    fig4.add_argument("--subsample", type=int, default=9,
                      help="also draw this many of the runs (the small scale's 9; 0: no)")
    fig4.add_argument("--seed", type=int, default=0)
    sel = sub.add_parser("fig4-selection",
                         help="Fig. 4: each series' median L1 split at its theta choice")
    sel.add_argument("--datasets", nargs="+", default=["cit_hepph"])
    sel.add_argument("--epsilon", type=float, default=1.0)
    sel.add_argument("--runs", type=int, default=300, help="runs of every candidate")
    sel.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "fig5-oracle":
        if args.runs < 2 or args.select_runs < 1:
            parser.error("--runs must be at least 2 and --select-runs at least 1")
        from privpub.data import get_dataset_spec
        from privpub.errors import PrivpubError
        from privpub.mechanisms.degree_projection import check_theta
        from privpub.validation import check_epsilon

        try:  # the names and numbers first, before any work
            for name in args.datasets or ():
                get_dataset_spec(name)
            for eps in args.epsilons or ():
                check_epsilon(eps)
            check_theta(args.theta_max, "--theta-max")
            fig5_oracle_main(args)
        except PrivpubError as exc:  # bad input or missing data: one line, exit 2
            parser.error(str(exc).splitlines()[0])
    elif args.command == "fig4-median":
        if args.runs < 2 or args.resamples < 1 or args.subsample < 0:
            parser.error("--runs must be at least 2, --resamples at least 1 and --subsample "
                         "not negative")
        from privpub.data import get_dataset_spec
        from privpub.errors import PrivpubError

        try:
            for name in args.datasets or ():
                get_dataset_spec(name)
            fig4_median_main(args)
        except PrivpubError as exc:
            parser.error(str(exc).splitlines()[0])
    elif args.command == "fig4-selection":
        if args.runs < 1:
            parser.error("--runs must be at least 1")
        from privpub.data import get_dataset_spec
        from privpub.errors import PrivpubError
        from privpub.validation import check_epsilon

        try:
            for name in args.datasets:
                get_dataset_spec(name)
            check_epsilon(args.epsilon)
            fig4_selection_main(args)
        except PrivpubError as exc:
            parser.error(str(exc).splitlines()[0])
    elif args.theta_bin:
        theta_bin_main()
    else:
        table2_main()


if __name__ == "__main__":
    main()
