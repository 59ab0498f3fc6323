"""Probe behind epasto2022 Fig. 7's note: why the network trained on node-DP randomized
response scores *below* the majority-class share at small epsilon.

    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.epasto2022 fig7 [--reps 10]

One run (:func:`fig7_run`) releases Adult's 99 one-hot features with
:func:`~privpub.baselines.randomized_response.randomized_response_node` (or, at
``epsilon = 0``, with :func:`pure_noise_release`: every entry a fair coin, the eps -> 0
limit of randomized response) and trains a classifier on it with the original labels, as
:func:`~privpub.metrics.binary_classification.accuracy_mlp_binary` does (``"mlp"`` *is* that
metric's network, same seed; a test checks it). One part is swapped at a time:

- the **classifier**: ``"logistic"`` (scikit-learn's L2 logistic regression),
  ``"mlp_early_stopping"`` (the network with early stopping on a 10% validation split) and
  ``"mlp_alpha"`` (the network with L2 penalty ``alpha = 1`` instead of ``1e-4``);
- the **test split**: beside the original test rows (the metric's), the same rows passed
  through the same mechanism with an independent random stream (a test split drawn from
  the distribution the classifier was trained on).

Per run and classifier it records the accuracy, the share of rows predicted positive (on
the original test split, on the released training rows, on the released test split) and
:func:`independent_accuracy`: the accuracy of predictions that are independent of the
truth with that positive share. :func:`class_shares` gives the label shares (the labels are
the truth's: the mechanism sees the feature matrix only) and :func:`ones_per_row` the
density of the released and of the test rows. Seeds are 0 .. reps-1 (:func:`streams`),
not the runner's, so numbers differ from the experiment's within its standard error.
``probes/tests/test_epasto2022_fig7.py`` reruns a small version. Diagnostics only.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp

from privpub.baselines.randomized_response import randomized_response_node
from privpub.data import load_dataset
from privpub.metrics.mlp import fit_mlp_binary
from privpub.types import as_binary_matrix

__all__ = ["CLASSIFIERS", "streams", "pure_noise_release", "release", "fit_classifier",
           "independent_accuracy", "class_shares", "ones_per_row", "fig7_run", "fig7_table",
           "add_fig7_parser"]

#: The metric's network and the swaps: a linear model, early stopping, a stronger penalty.
CLASSIFIERS = ("mlp", "logistic", "mlp_early_stopping", "mlp_alpha")
DATASET = "adult_binary_ml"


def streams(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """The three independent random streams of run ``seed``: the mechanism's, the
    classifier's (the ``rng`` the metric would get) and the one that noises the test split."""
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))


def pure_noise_release(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    """A 0/1 matrix of independent fair coins: randomized response's eps -> 0 limit (each
    entry flips with probability ``1 / (1 + e^0) = 1/2``, so the output no longer depends
    on the input)."""
    return sp.csr_array(rng.integers(0, 2, size=shape, dtype=np.int8))


def release(matrix, epsilon: float, rng: np.random.Generator) -> sp.csr_array:
    """Node-DP randomized response of ``matrix`` at ``epsilon`` (Fig. 7's mechanism), or
    :func:`pure_noise_release` at ``epsilon = 0``."""
    if epsilon == 0:
        return pure_noise_release(matrix.shape, rng)
    return randomized_response_node(matrix, epsilon=epsilon, rng=rng)


def fit_classifier(name: str, x, y01: np.ndarray, rng: np.random.Generator):
    """Fit classifier ``name`` (:data:`CLASSIFIERS`) on ``x`` with 0/1 labels ``y01``;
    returns an object with ``predict``. ``"mlp"`` is the metric's network with the seed the
    metric draws from ``rng``; the scikit-learn swaps use the same seed."""
    seed = int(rng.integers(0, 2**31 - 1))  # as accuracy_mlp_binary draws it
    if name == "mlp":
        return fit_mlp_binary(x, y01, hidden=10, max_iter=200, seed=seed)
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    if name == "logistic":
        model = LogisticRegression(max_iter=1000)
    elif name == "mlp_early_stopping":
        model = MLPClassifier(hidden_layer_sizes=(10,), early_stopping=True, random_state=seed)
    elif name == "mlp_alpha":
        model = MLPClassifier(hidden_layer_sizes=(10,), alpha=1.0, random_state=seed)
    else:
        raise ValueError(f"classifier must be one of {CLASSIFIERS}, got {name!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(x, y01)


def independent_accuracy(positive_share: float, test_positive: float) -> float:
    """Accuracy of predictions independent of the truth that call ``positive_share`` of the
    rows positive, on a test split with ``test_positive`` positives:
    ``s pi + (1 - s)(1 - pi)``. With ``s`` = the training share this is the ``sum_c p_c^2``
    of a classifier that predicts with the class frequencies; with ``s = 0`` the majority
    rate."""
    return positive_share * test_positive + (1.0 - positive_share) * (1.0 - test_positive)


def class_shares(truth) -> dict:
    """Positive share of the training labels and of the test labels, the majority rate on
    the test split and :func:`independent_accuracy` at the training share (``sum p_c^2``)."""
    train = float(np.mean(np.asarray(truth.labels) == 1))
    test = float(np.mean(np.asarray(truth.test_labels) == 1))
    return {"train_positive": train, "test_positive": test, "majority": max(test, 1 - test),
            "class_frequency_guess": independent_accuracy(train, test)}


def ones_per_row(x) -> float:
    """Mean number of 1-entries per row."""
    m = as_binary_matrix(x)
    return m.nnz / m.shape[0]


def fig7_run(truth, *, epsilon: float, seed: int, classifiers=CLASSIFIERS) -> list[dict]:
    """One release of ``truth`` at ``epsilon`` (0: pure noise) and, per classifier trained
    on it with the truth's labels, its accuracy and positive share on the original test
    split (``acc``, ``share``; ``"mlp"``'s ``acc`` is the metric's value), its positive
    share on the released training rows (``share_train``), its accuracy and share on the
    noised test split (``acc_noised``, ``share_noised``), ``independent``
    (:func:`independent_accuracy` at ``share``) and the mean predicted probability on the
    training rows and on the original test rows (``p_train``, ``p_test``; ``"mlp"`` only)."""
    mech_rng, clf_rng, test_rng = streams(seed)
    y = (np.asarray(truth.labels) == 1).astype(np.int8)
    y_test = (np.asarray(truth.test_labels) == 1).astype(np.int8)
    x_test = as_binary_matrix(truth.test_matrix)
    x_train = release(truth, epsilon, mech_rng)
    x_noised = release(x_test, epsilon, test_rng)
    pi = float(y_test.mean())
    seed_state = clf_rng.bit_generator.state
    rows = []
    for name in classifiers:
        clf_rng.bit_generator.state = seed_state  # every classifier draws the same seed
        model = fit_classifier(name, x_train, y, clf_rng)
        pred = np.asarray(model.predict(x_test))
        noised = np.asarray(model.predict(x_noised))
        row = {"epsilon": epsilon, "seed": seed, "classifier": name,
               "acc": float(np.mean(pred == y_test)), "share": float(pred.mean()),
               "share_train": float(np.mean(model.predict(x_train))),
               "acc_noised": float(np.mean(noised == y_test)),
               "share_noised": float(noised.mean())}
        row["independent"] = independent_accuracy(row["share"], pi)
        if name == "mlp":  # MLPBinary.predict_proba: P(positive) per row
            row["p_train"] = float(model.predict_proba(x_train).mean())
            row["p_test"] = float(model.predict_proba(x_test).mean())
        rows.append(row)
    return rows


def fig7_table(truth, *, epsilons=(1.0, 0.0), reps: int = 10,
               classifiers=CLASSIFIERS) -> pd.DataFrame:
    """:func:`fig7_run` for seeds ``0 .. reps - 1`` at every epsilon, averaged per epsilon
    and classifier; ``acc_ci95`` is the half-width of the t interval of the mean accuracy
    (as the experiment's bands); ``acc_min`` .. ``share_max`` the range over the runs."""
    from scipy import stats

    runs = pd.DataFrame([row for eps in epsilons for seed in range(reps)
                         for row in fig7_run(truth, epsilon=eps, seed=seed,
                                             classifiers=classifiers)])
    grouped = runs.groupby(["epsilon", "classifier"], sort=False)
    table = grouped.mean(numeric_only=True).drop(columns="seed")
    sem = grouped["acc"].sem().fillna(0.0)
    table["acc_ci95"] = sem * stats.t.ppf(0.975, max(reps - 1, 1))
    table["acc_min"] = grouped["acc"].min()
    table["acc_max"] = grouped["acc"].max()
    table["share_min"] = grouped["share"].min()
    table["share_max"] = grouped["share"].max()
    return table.reset_index()


def _print_fig7(args) -> None:
    truth = load_dataset(DATASET)
    shares = class_shares(truth)
    print(f"{DATASET}: {truth.shape[0]:,} training rows x {truth.shape[1]} features, "
          f"{truth.test_matrix.shape[0]:,} test rows")
    print(f"positive share: training labels {shares['train_positive']:.3f}, test labels "
          f"{shares['test_positive']:.3f}; majority rate {shares['majority']:.3f}; "
          f"predicting with the class frequencies (sum p_c^2) "
          f"{shares['class_frequency_guess']:.3f}")
    print("labels: the truth's (the mechanism releases the feature matrix only)")
    print(f"ones per row: original training and test rows {ones_per_row(truth):.2f} / "
          f"{ones_per_row(truth.test_matrix):.2f}; released rows at "
          + ", ".join(f"eps = {e:g}: {ones_per_row(release(truth, e, streams(0)[0])):.2f}"
                      for e in args.eps) + " (eps = 0: pure noise)\n")
    table = fig7_table(truth, epsilons=args.eps, reps=args.reps,
                       classifiers=args.classifiers)
    print(f"{args.reps} runs each (seeds 0..{args.reps - 1}); original = the metric's test "
          "split; noised = the test split through the same mechanism")
    print("| eps | classifier | accuracy, original test (95% band; min-max) | positive share: "
          "original test (min-max) / released train / noised test | independent of the "
          "truth at that share | accuracy, noised test | mean p(1): train / test |")
    print("|---|---|---|---|---|---|---|")
    for r in table.itertuples():
        p = (f"{r.p_train:.3f} / {r.p_test:.3f}"
             if "p_train" in table and not np.isnan(r.p_train) else "-")
        print(f"| {r.epsilon:g} | {r.classifier} | {r.acc:.3f} +- {r.acc_ci95:.3f} "
              f"({r.acc_min:.3f}-{r.acc_max:.3f}) | {r.share:.3f} ({r.share_min:.3f}-"
              f"{r.share_max:.3f}) / {r.share_train:.3f} / "
              f"{r.share_noised:.3f} | {r.independent:.3f} | {r.acc_noised:.3f} | {p} |")


def add_fig7_parser(sub) -> None:
    """Register the ``fig7`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("fig7", help="node-DP randomized response below the majority rate")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--eps", nargs="+", type=float, default=[1.0, 0.0],
                   help="epsilons; 0 = pure noise (the eps -> 0 limit)")
    p.add_argument("--classifiers", nargs="+", choices=CLASSIFIERS, default=list(CLASSIFIERS))
    p.set_defaults(check=_check, run=_print_fig7)


def _check(args) -> str | None:
    if args.reps < 1 or any(e < 0 for e in args.eps):
        return "--reps must be >= 1 and every --eps >= 0"
    return None
