"""The probe behind epasto2022 Fig. 7's note: node-DP randomized response at small epsilon.

- The probe's network is the metric's (same release, same seed, same accuracy); the
  labels are the truth's, never part of the release.
- The finding, on one Adult run at eps = 1 (``python -m privpub.probes.epasto2022 fig7``
  reruns it at 10 runs): the network predicts few positives on its own (released) training
  rows and on a test split noised the same way (accuracy near the majority rate there),
  but many on the original test rows, whose 8 ones per row it never saw in training (about
  49 per released row); those predictions are about as good as predictions independent of
  the truth, so the accuracy falls below the majority rate. A linear, regularised model
  predicts the majority class everywhere; early stopping keeps the shift.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import yaml

import privpub.baselines  # noqa: F401
from privpub.data import load_dataset
from privpub.metrics.binary_classification import accuracy_mlp_binary
from privpub.probes.epasto2022 import fig7 as probe
from privpub.probes.epasto2022 import main as probes_main
from privpub.probes.support import needs_data
from privpub.types import LabelledMatrix

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "conf" / "experiment" / "epasto2022_fig7.yaml"

needs_adult = needs_data(probe.DATASET)


def _notes() -> str:
    return " ".join(yaml.safe_load(CONFIG.read_text())["notes"].split())


def test_pure_noise_is_the_limit_and_independent_accuracy():
    rng = np.random.default_rng(0)
    x = probe.release(sp.csr_array(np.eye(50, 40, dtype=np.int8)), 0.0, rng)
    assert x.shape == (50, 40) and abs(x.nnz / 2000 - 0.5) < 0.05
    # eps = 0: the output does not depend on the input
    a = probe.release(sp.csr_array((50, 40), dtype=np.int8), 0.0, np.random.default_rng(1))
    b = probe.release(sp.csr_array(np.ones((50, 40), dtype=np.int8)), 0.0,
                      np.random.default_rng(1))
    assert (a != b).nnz == 0
    assert probe.independent_accuracy(0.0, 0.25) == 0.75
    assert probe.independent_accuracy(0.25, 0.25) == pytest.approx(0.625)
    assert probe.ones_per_row(np.eye(4)) == 1.0


def test_bad_arguments_exit_2():
    with pytest.raises(SystemExit) as exc:
        probes_main(["fig7", "--reps", "0"])
    assert exc.value.code == 2


@pytest.fixture(scope="module")
def truth():
    return load_dataset(probe.DATASET)


@pytest.fixture(scope="module")
def eps1(truth):
    rows = probe.fig7_run(truth, epsilon=1.0, seed=0, classifiers=("mlp", "logistic"))
    return {r["classifier"]: r for r in rows}


@needs_adult
def test_probe_network_is_the_metric(truth):
    """On a slice of Adult (fast): the probe's release and network are the metric's."""
    small = LabelledMatrix.wrap(truth[:3000], labels=truth.labels[:3000],
                                test_matrix=truth.test_matrix[:1500],
                                test_labels=truth.test_labels[:1500])
    (row,) = probe.fig7_run(small, epsilon=1.0, seed=3, classifiers=("mlp",))
    mech_rng, clf_rng, _ = probe.streams(3)
    released = probe.release(small, 1.0, mech_rng)
    assert not hasattr(released, "labels")  # the labels are not released (nor flipped)
    assert released.shape == small.shape
    assert accuracy_mlp_binary(small, released, rng=clf_rng) == row["acc"]


@needs_adult
def test_below_majority_comes_from_the_test_rows_shift(truth, eps1):
    shares = probe.class_shares(truth)
    majority = shares["majority"]
    assert majority == pytest.approx(0.754, abs=0.001)
    assert shares["class_frequency_guess"] == pytest.approx(0.628, abs=0.001)
    assert probe.ones_per_row(truth.test_matrix) == 8.0
    mlp = eps1["mlp"]
    assert mlp["acc"] < majority - 0.1
    # not "predicting with the class frequencies": few positives on its own training rows
    assert mlp["share_train"] < 0.1 and mlp["share_noised"] < 0.1
    # ... and in distribution it is at about the majority rate
    assert mlp["acc_noised"] > majority - 0.04
    # the original test rows are out of distribution: many more positives, about as good
    # as positives drawn independently of the truth
    assert mlp["share"] > 4 * mlp["share_train"]
    assert mlp["p_test"] > mlp["p_train"] + 0.05
    assert abs(mlp["acc"] - mlp["independent"]) < 0.05
    # a regularised linear model predicts the majority class on every row
    logistic = eps1["logistic"]
    assert logistic["share"] == 0.0 and logistic["acc"] == pytest.approx(majority)


@needs_adult
def test_early_stopping_keeps_the_shift(truth):
    (row,) = probe.fig7_run(truth, epsilon=0.0, seed=0, classifiers=("mlp_early_stopping",))
    majority = probe.class_shares(truth)["majority"]
    assert row["acc"] < majority - 0.1 and row["share"] > 0.2
    assert row["acc_noised"] == pytest.approx(majority, abs=0.005)


def test_notes_name_the_probe():
    notes = _notes()
    assert "no probe yet" not in notes
    assert "python -m privpub.probes.epasto2022 fig7" in notes
    # the paper-scale numbers that command prints (10 runs; not rerun here)
    for quoted in ("2.6%", "0.739", "0.628", "24.5%", "0.632 +- 0.053", "0.630",
                   "0.622 +- 0.081", "0.659 +- 0.121"):
        assert quoted in notes, quoted
