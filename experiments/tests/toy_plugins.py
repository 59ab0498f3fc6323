"""Toy mechanisms for the runner's tests (loaded with ``plugins=[experiments.tests.toy_plugins]``).

They live in an importable module, not a conftest, so that loky and dask worker processes
register them too.
"""

import numpy as np

from privpub.errors import NotApplicableError
from privpub.noise import is_noise_off, laplace_mechanism
from privpub.registry import EDGE_DP, NO_PRIVACY, register_mechanism, register_metric
from privpub.types import DegreeHistogram, Kind, Release, as_binary_matrix

#: ``interrupt_at`` only fires while armed (a test arms it, then resumes disarmed).
INTERRUPT = {"armed": False}

#: toy_sleep's calls in this process (a test counts how often a release is computed).
CALLS: list = []


@register_mechanism(
    "toy_copy",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=NO_PRIVACY,
    role="reference",
)
def toy_copy(matrix, *, rng, tag: int = 0, k: int = 2, depth: int = 0):
    """Return the input unchanged (the cheapest possible cell; ``tag``, ``k`` and ``depth``
    only make cells and exercise the parameter checks). ``k`` above the number of rows
    cannot apply (like k-anonymity with k > rows): the cell is skipped."""
    if k > matrix.shape[0]:
        raise NotApplicableError(f"k = {k} > {matrix.shape[0]} rows")
    return matrix


@register_mechanism(
    "toy_drop", input_kind=Kind.BINARY_MATRIX, output_kind=Kind.BINARY_MATRIX, privacy=EDGE_DP,
    source="Sec 9.9, Algorithm 9",
)
def toy_drop(matrix, *, epsilon, rng, ledger=None, fail_at=None, interrupt_at=None):
    """Drop each entry with probability 1/(1+e^eps); spends through a dummy Laplace count.

    Not a DP mechanism: only a seeded, ledger-using stand-in for runner tests.
    ``fail_at``/``interrupt_at``: raise RuntimeError / KeyboardInterrupt (when
    ``INTERRUPT["armed"]``) at that epsilon.
    """
    if fail_at is not None and epsilon == fail_at:
        raise RuntimeError(f"deliberate failure at epsilon={epsilon}")
    if INTERRUPT["armed"] and interrupt_at is not None and epsilon == interrupt_at:
        raise KeyboardInterrupt
    m = as_binary_matrix(matrix).tocoo()
    keep = rng.random(m.nnz) >= 1 / (1 + np.exp(epsilon))
    noisy = laplace_mechanism(float(m.nnz), sensitivity=1, epsilon=epsilon, rng=rng, ledger=ledger)
    out = as_binary_matrix(type(matrix)((m.data[keep], (m.row[keep], m.col[keep])), shape=m.shape))
    return Release(out, {"noisy_count": float(noisy)})


@register_mechanism(
    "toy_overspend", input_kind=Kind.BINARY_MATRIX, output_kind=Kind.BINARY_MATRIX, privacy=EDGE_DP
)
def toy_overspend(matrix, *, epsilon, rng, ledger=None):
    """Tries to spend twice its budget: the ledger must refuse."""
    laplace_mechanism(0.0, sensitivity=1, epsilon=epsilon, rng=rng, ledger=ledger)
    laplace_mechanism(0.0, sensitivity=1, epsilon=epsilon, rng=rng, ledger=ledger)
    return matrix


@register_mechanism(
    "toy_nospend", input_kind=Kind.BINARY_MATRIX, output_kind=Kind.BINARY_MATRIX, privacy=EDGE_DP
)
def toy_nospend(matrix, *, epsilon, rng, ledger=None):
    """Claims DP but never spends: the runner must flag it."""
    return matrix


@register_mechanism(
    "toy_wrong_kind",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=NO_PRIVACY,
)
def toy_wrong_kind(matrix, *, rng):
    """Returns a histogram although registered as releasing a binary matrix."""
    return DegreeHistogram([1.0, 2.0])


@register_mechanism(
    "toy_noisy_histogram",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=EDGE_DP,
)
def toy_noisy_histogram(graph, *, epsilon, rng, ledger=None, theta: int = 1):
    """Degree histogram plus Laplace noise of scale ``theta / epsilon`` (a larger ``theta``
    is worse: exercises best-over-parameter plots and stored releases)."""
    counts = graph.degree_histogram().counts
    noisy = laplace_mechanism(
        counts, sensitivity=theta, epsilon=epsilon, rng=rng, ledger=ledger, label="histogram"
    )
    return DegreeHistogram(noisy)


@register_mechanism(
    "toy_sleep",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=NO_PRIVACY,
    role="reference",
)
def toy_sleep(matrix, *, rng, duration: float = 0.5, tag: int = 0):
    """Return the input after ``duration`` seconds: a run long enough to interrupt."""
    import time

    CALLS.append(tag)
    time.sleep(duration)
    return matrix


@register_metric("toy_noise_off", kinds=Kind.BINARY_MATRIX, higher_is_better=True,
                 label="noise switched off while scoring")
def toy_noise_off(truth, release) -> float:
    """1 when the metric runs inside :func:`privpub.noise.noise_off` (a metric that refits a
    learner runs the mechanism again, which must stay noise-free for a noise-free twin)."""
    return float(is_noise_off())


@register_metric("toy_draw", kinds=Kind.BINARY_MATRIX, higher_is_better=True,
                 label="a draw from the metric's stream")
def toy_draw(truth, release, rng) -> float:
    return float(rng.random())


@register_metric("toy_draw_again", kinds=Kind.BINARY_MATRIX, higher_is_better=True,
                 label="a draw from toy_draw's stream", stream="toy_draw")
def toy_draw_again(truth, release, rng) -> float:
    return float(rng.random())


@register_metric("toy_draw_own", kinds=Kind.BINARY_MATRIX, higher_is_better=True,
                 label="a draw from the metric's own stream")
def toy_draw_own(truth, release, rng) -> float:
    return float(rng.random())


@register_metric("toy_curve", kinds=Kind.BINARY_MATRIX, higher_is_better=True,
                 label="a curve: rows toy_curve/<x>")
def toy_curve(truth, release) -> dict:
    return {"1": 1.0, "2": 2.0}
