"""scikit-learn's ``MLPClassifier`` (one ReLU hidden layer, binary labels, Adam), compiled.

epasto2022 Fig. 4 scores every release by "a 1-layer, 10-hidden unit network with RELU
activation nodes" trained on it (Appendix D); :func:`privpub.metrics.binary_classification.
accuracy_mlp_binary` fits it with :func:`fit_mlp_binary`: **the same algorithm** as
``sklearn.neural_network.MLPClassifier(hidden_layer_sizes=(10,), activation="relu")``
(scikit-learn 1.9.1, ``solver="adam"``, every other parameter at its default), with the
minibatches of one epoch run by one numba kernel (:func:`_epoch`). Each function's
docstring says which steps of ``sklearn/neural_network/_multilayer_perceptron.py``,
``_stochastic_optimizers.py``, ``_base.py`` and ``sklearn/utils/_indexing.py`` it
replicates: the random stream and initialisation (:func:`_init_weights`), the epochs,
minibatches and stopping rule (:func:`_train`), the forward pass, loss and gradients
(:func:`_epoch`), Adam (:func:`_adam_step`) and the prediction
(:meth:`MLPBinary.predict_proba`). The speed-up (10x on Adult): docs/timings.md.

**Not bit for bit.** Three sums are BLAS calls in scikit-learn (``hidden @ W1``, ``hidden.T
@ d1``, and ``np.dot(W, W)`` in the L2 term), whose summation order depends on the OpenBLAS
kernel picked for the CPU; here the first two are sequential sums and the third uses 4
partial sums. Everything else is the same sequence of IEEE operations (numba compiles
without fast-math, so no reassociation and no fused multiply-add; ``exp`` and ``log`` are
libm's, as in scipy's ``expit`` and ``xlogy``; ``error_model="numpy"`` only drops Python's
zero-division checks). The two runs differ by rounding: on the test problems coefficients
agree to ~2e-16 relative after 1-5 epochs and ~4e-15 after 200, losses to ~5e-16, with the
same ``n_iter`` and predictions (``metrics/tests/test_mlp.py``). On Adult (seed 5) both run
132 epochs, the largest coefficient difference is 7e-16 and no test prediction differs.
Stored values other than 1 enter as products ``a * w``, which scipy may compute with a fused
multiply-add on some builds; for 0/1 data (``a = 1``) the sparse sums are exact replicas.

References
----------
.. [epasto2022] A. Epasto et al. Smooth Anonymity for Sparse Graphs. 2022, Sec. 6, Fig. 4,
   Appendix D.
.. [sklearn] scikit-learn 1.9.1, ``sklearn.neural_network.MLPClassifier``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from privpub.algorithms.pairwise import pairwise_sum
from privpub.errors import PrivpubError
from privpub.validation import check_positive_int

__all__ = ["MLPBinary", "fit_mlp_binary"]

# scikit-learn's MLPClassifier defaults (solver="adam")
ALPHA = 1e-4
LEARNING_RATE_INIT = 1e-3
BETA_1 = 0.9
BETA_2 = 0.999
EPSILON = 1e-8
TOL = 1e-4
N_ITER_NO_CHANGE = 10
MAX_BATCH = 200
_EPS64 = float(np.finfo(np.float64).eps)  # binary_log_loss clips to [eps, 1 - eps]


@dataclass(frozen=True, eq=False)
class MLPBinary:
    """A fitted one-hidden-layer ReLU network with one logistic output.

    Attributes
    ----------
    coefs : tuple of ndarray
        ``(W0, W1)`` of shapes ``(n_features, hidden)`` and ``(hidden, 1)``, as
        scikit-learn's ``coefs_``.
    intercepts : tuple of ndarray
        ``(b0, b1)`` of shapes ``(hidden,)`` and ``(1,)``, as ``intercepts_``.
    n_iter : int
        Epochs run (``n_iter_``).
    loss_curve : ndarray
        Training loss after each epoch (``loss_curve_``).
    """

    coefs: tuple[np.ndarray, np.ndarray]
    intercepts: tuple[np.ndarray, np.ndarray]
    n_iter: int
    loss_curve: np.ndarray

    @property
    def n_features(self) -> int:
        return self.coefs[0].shape[0]

    def predict_proba(self, x) -> np.ndarray:
        """Probability of class 1 for every row of ``x`` (sparse or dense, ``n_features``
        columns), computed as scikit-learn's ``_forward_pass_fast``: ``expit(relu(X @ W0 +
        b0) @ W1 + b1)`` with the very numpy / scipy operations scikit-learn uses (so the
        same weights give the same labels)."""
        x = _as_csr(x)
        if x.shape[1] != self.n_features:
            raise PrivpubError(
                f"x has {x.shape[1]} columns, the network was fitted on {self.n_features}"
            )
        w0, w1 = self.coefs
        b0, b1 = self.intercepts
        hidden = x @ w0
        hidden += b0
        np.maximum(hidden, 0, out=hidden)
        out = hidden @ w1
        out += b1
        expit(out, out=out)
        return out.ravel()

    def predict(self, x) -> np.ndarray:
        """0/1 label of every row of ``x``: 1 where the probability is > 0.5
        (scikit-learn's ``LabelBinarizer`` threshold)."""
        return (self.predict_proba(x) > 0.5).astype(np.int8)


def _as_csr(x) -> sp.csr_array:
    """``x`` as a float64 CSR array (the stored entries and their order are kept)."""
    if sp.issparse(x):
        if x.ndim != 2:
            raise PrivpubError(f"x must be 2-D, got shape {x.shape}")
        return sp.csr_array(x, dtype=np.float64)
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2:
        raise PrivpubError(f"x must be 2-D, got shape {arr.shape}")
    return sp.csr_array(arr)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _adam_step(param, acc, m, v, lr, alpha, n_b, beta_1, beta_2, epsilon):
    """Finish the gradient of a flat parameter array, ``g = (acc + alpha * param) / n_b``
    (``g = acc / n_b`` when ``alpha`` is None: intercepts), apply one Adam update in
    scikit-learn's order of operations, and reset ``acc`` to 0 for the next minibatch.

    Adam (``lr 1e-3, beta_1 0.9, beta_2 0.999, epsilon 1e-8``): ``m = beta_1 m + (1 -
    beta_1) g``; ``v = beta_2 v + (1 - beta_2) g**2``; ``param += (-lr_t * m) / (sqrt(v) +
    epsilon)``, ``lr_t`` computed by :func:`_train`. L2 ``alpha = 1e-4``."""
    c1 = 1 - beta_1
    c2 = 1 - beta_2
    for q in range(param.size):
        if alpha is None:
            g = acc[q] / n_b
        else:
            g = (acc[q] + alpha * param[q]) / n_b
        mq = beta_1 * m[q] + c1 * g
        vq = beta_2 * v[q] + c2 * (g * g)
        m[q] = mq
        v[q] = vq
        param[q] += (-lr * mq) / (math.sqrt(vq) + epsilon)
    acc[:] = 0.0


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _sum_squares(a):
    """``np.dot(a, a)`` with 4 partial sums. scikit-learn's is a BLAS call whose order
    depends on the CPU's kernel: no order matches it everywhere; this one is fast."""
    n = a.size
    n4 = n - n % 4
    r0 = r1 = r2 = r3 = 0.0
    for q in range(0, n4, 4):
        r0 += a[q] * a[q]
        r1 += a[q + 1] * a[q + 1]
        r2 += a[q + 2] * a[q + 2]
        r3 += a[q + 3] * a[q + 3]
    res = (r0 + r1) + (r2 + r3)
    for q in range(n4, n):
        res += a[q] * a[q]
    return res


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _gather_rows(indptr, indices, data, order, binary):
    """The rows ``order`` of a CSR matrix, contiguous (``X[order]``, as scikit-learn's
    ``_safe_indexing``): one pass of random reads instead of one per minibatch row.
    Unsigned row pointers and column indices (no negative-index wraparound code in the
    loops that read them); ``data`` only when the matrix is not ``binary``."""
    n = order.size
    ptr = np.empty(n + 1, np.uint64)
    ptr[0] = 0
    for r in range(n):
        i = order[r]
        ptr[r + 1] = ptr[r] + np.uint64(indptr[i + 1] - indptr[i])
    nnz = ptr[n]
    idx = np.empty(nnz, np.uint32)
    val = np.empty(np.uint64(0) if binary else nnz)
    for r in range(n):
        i = order[r]
        idx[ptr[r]:ptr[r + 1]] = indices[indptr[i]:indptr[i + 1]]
        if not binary:
            val[ptr[r]:ptr[r + 1]] = data[indptr[i]:indptr[i + 1]]
    return ptr, idx, val


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _epoch(indptr, indices, data, binary, y, order, batch_size, lrs, w0, b0, w1, b1,
           m_w0, v_w0, m_b0, v_b0, m_w1, v_w1, m_b1, v_b1,
           alpha, beta_1, beta_2, epsilon, clip):
    """Run every minibatch of one epoch (rows ``order``, consecutive slices of
    ``batch_size``), updating the parameters and Adam's moments in place; ``lrs[b]`` is
    the learning rate of batch ``b``. Returns ``sum_b loss_b * n_b``.

    ``w1`` and every moment are passed flat. One pass over the batch's rows computes the
    forward pass and accumulates every gradient: each accumulator adds the rows in batch
    order, as scikit-learn's products do. ``binary``: every stored entry is 1, so the value
    array is neither copied nor read (``a = 1.0``). Hidden units are summed in registers,
    in blocks of 8, then 2, then 1 (same order). Replicated, per minibatch of ``n_b`` rows:

    * **Forward.** ``hidden = relu(X_b @ W0 + b0)`` (``X_b @ W0`` summed over each row's
      stored entries in order, starting from 0, as scipy's ``csr_matvecs``), ``out =
      expit(hidden @ W1 + b1)``.
    * **Loss** (``binary_log_loss``): ``p`` clipped to ``[eps, 1 - eps]`` (``eps`` of
      float64), ``-(sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)]) / n_b`` with numpy's
      pairwise summation, plus ``(0.5 * alpha) * (|W0|^2 + |W1|^2) / n_b``; the epoch's loss
      is ``sum_b loss_b * n_b / n``.
    * **Gradients.** ``d1 = out - y``; ``grad W1 = (hidden.T @ d1 + alpha W1) / n_b``;
      ``grad b1 = sum(d1) / n_b`` (pairwise); ``d0 = d1 @ W1.T``, zeroed where ``hidden ==
      0``; ``grad W0 = (X_b.T @ d0 + alpha W0) / n_b`` (accumulated over the batch's rows in
      order, as scipy's ``csc_matvecs``); ``grad b0 = sum(d0, axis=0) / n_b`` (sequential
      over rows).
    """
    n = order.size
    n_features, n_hidden = w0.shape
    n8 = n_hidden - n_hidden % 8
    ptr, idx, val = _gather_rows(indptr, indices, data, order, binary)
    hid = np.empty(n_hidden)
    terms = np.empty(batch_size)
    d1 = np.empty(batch_size)
    d0 = np.empty(n_hidden)
    g_w0 = np.zeros((n_features, n_hidden))
    g_b0 = np.zeros(n_hidden)
    g_w1 = np.zeros(n_hidden)
    g_b1 = np.zeros(1)
    w0f = w0.reshape(-1)
    g_w0f = g_w0.reshape(-1)
    accumulated = 0.0
    n_batches = (n + batch_size - 1) // batch_size
    for b in range(n_batches):
        start = b * batch_size
        stop = min(start + batch_size, n)
        n_b = stop - start
        for r in range(n_b):
            row0, row1 = ptr[start + r], ptr[start + r + 1]
            yi = y[order[start + r]]
            # ---- forward: hidden = relu(x_i @ W0 + b0) (scipy: 0 + w_j1 + w_j2 + ...)
            for k0 in range(0, n8, 8):
                h0 = h1 = h2 = h3 = h4 = h5 = h6 = h7 = 0.0
                for p in range(row0, row1):
                    j = idx[p]
                    a = 1.0 if binary else val[p]
                    h0 += a * w0[j, k0]
                    h1 += a * w0[j, k0 + 1]
                    h2 += a * w0[j, k0 + 2]
                    h3 += a * w0[j, k0 + 3]
                    h4 += a * w0[j, k0 + 4]
                    h5 += a * w0[j, k0 + 5]
                    h6 += a * w0[j, k0 + 6]
                    h7 += a * w0[j, k0 + 7]
                hid[k0] = h0
                hid[k0 + 1] = h1
                hid[k0 + 2] = h2
                hid[k0 + 3] = h3
                hid[k0 + 4] = h4
                hid[k0 + 5] = h5
                hid[k0 + 6] = h6
                hid[k0 + 7] = h7
            for k0 in range(n8, n_hidden - 1, 2):
                h0 = h1 = 0.0
                for p in range(row0, row1):
                    j = idx[p]
                    a = 1.0 if binary else val[p]
                    h0 += a * w0[j, k0]
                    h1 += a * w0[j, k0 + 1]
                hid[k0] = h0
                hid[k0 + 1] = h1
            if n_hidden % 2:
                h0 = 0.0
                for p in range(row0, row1):
                    h0 += (1.0 if binary else val[p]) * w0[idx[p], n_hidden - 1]
                hid[n_hidden - 1] = h0
            s = 0.0
            for k in range(n_hidden):
                z = hid[k] + b0[k]
                if z < 0.0:  # np.maximum(z, 0): keeps -0.0 and NaN
                    z = 0.0
                hid[k] = z
                s += z * w1[k]  # BLAS in scikit-learn: order differs
            # out = expit(hidden @ W1 + b1), scipy's 1 / (1 + exp(-z))
            prob = 1.0 / (1.0 + math.exp(-(s + b1[0])))
            # ---- binary_log_loss term: xlogy(y, p) + xlogy(1 - y, 1 - p), p clipped
            pc = min(max(prob, clip), 1.0 - clip)
            if yi != 0.0:
                terms[r] = math.log(pc)
            else:
                terms[r] = math.log(1.0 - pc)
            # ---- backward: d1 = out - y, d0 = d1 W1^T where hidden > 0
            e = prob - yi
            d1[r] = e
            for k in range(n_hidden):
                g_w1[k] += hid[k] * e  # BLAS in scikit-learn: order differs
                d0[k] = 0.0 if hid[k] == 0.0 else e * w1[k]
                g_b0[k] += d0[k]
            # X_b.T @ d0 (scipy's csc_matvecs: rows in batch order)
            for k0 in range(0, n8, 8):
                e0, e1, e2, e3 = d0[k0], d0[k0 + 1], d0[k0 + 2], d0[k0 + 3]
                e4, e5, e6, e7 = d0[k0 + 4], d0[k0 + 5], d0[k0 + 6], d0[k0 + 7]
                for p in range(row0, row1):
                    j = idx[p]
                    a = 1.0 if binary else val[p]
                    g_w0[j, k0] += a * e0
                    g_w0[j, k0 + 1] += a * e1
                    g_w0[j, k0 + 2] += a * e2
                    g_w0[j, k0 + 3] += a * e3
                    g_w0[j, k0 + 4] += a * e4
                    g_w0[j, k0 + 5] += a * e5
                    g_w0[j, k0 + 6] += a * e6
                    g_w0[j, k0 + 7] += a * e7
            for k0 in range(n8, n_hidden - 1, 2):
                e0, e1 = d0[k0], d0[k0 + 1]
                for p in range(row0, row1):
                    j = idx[p]
                    a = 1.0 if binary else val[p]
                    g_w0[j, k0] += a * e0
                    g_w0[j, k0 + 1] += a * e1
            if n_hidden % 2:
                e0 = d0[n_hidden - 1]
                for p in range(row0, row1):
                    g_w0[idx[p], n_hidden - 1] += (1.0 if binary else val[p]) * e0
        loss = -(pairwise_sum(terms, 0, n_b) / n_b)
        values = 0.0
        values += _sum_squares(w0f)
        values += _sum_squares(w1)
        loss += (0.5 * alpha) * values / n_b
        accumulated += loss * n_b
        g_b1[0] = pairwise_sum(d1, 0, n_b)
        # ---- Adam (coefs then intercepts; the updates are elementwise)
        lr = lrs[b]
        _adam_step(w0f, g_w0f, m_w0, v_w0, lr, alpha, n_b, beta_1, beta_2, epsilon)
        _adam_step(w1, g_w1, m_w1, v_w1, lr, alpha, n_b, beta_1, beta_2, epsilon)
        _adam_step(b0, g_b0, m_b0, v_b0, lr, None, n_b, beta_1, beta_2, epsilon)
        _adam_step(b1, g_b1, m_b1, v_b1, lr, None, n_b, beta_1, beta_2, epsilon)
    return accumulated


def _init_coef(rs: np.random.RandomState, fan_in: int, fan_out: int):
    """scikit-learn's ``_init_coef`` for ``activation="relu"``: Glorot-uniform with factor
    6 (used for the output layer too), the coefficients drawn before the intercepts."""
    init_bound = np.sqrt(6.0 / (fan_in + fan_out))
    coef = rs.uniform(-init_bound, init_bound, (fan_in, fan_out))
    intercept = rs.uniform(-init_bound, init_bound, fan_out)
    return coef, intercept


def fit_mlp_binary(x, y01, *, hidden: int = 10, max_iter: int = 200, seed: int) -> MLPBinary:
    """Fit scikit-learn's ``MLPClassifier`` (one hidden ReLU layer, Adam) to 0/1 labels,
    compiled (epasto2022 Fig. 4's classifier).

    The same algorithm, random stream and order of operations as
    ``MLPClassifier(hidden_layer_sizes=(hidden,), activation="relu", max_iter=max_iter,
    random_state=seed).fit(x, y01)`` with every other parameter at its default (Adam,
    ``alpha=1e-4``, ``batch_size=min(200, n)``, shuffled, ``tol=1e-4``,
    ``n_iter_no_change=10``, no early stopping); only three BLAS sums are summed in a
    different order (see the module docstring). ~10x faster on Adult.

    Parameters
    ----------
    x : sparse matrix or array of shape (n_samples, n_features)
        Features; used as float64 CSR (the stored entries, in their stored order). The
        intended input is a 0/1 matrix (every stored entry 1), for which the sparse sums
        are exact replicas of scipy's.
    y01 : array of shape (n_samples,)
        Labels, each 0 or 1 (the larger class of scikit-learn's ``LabelBinarizer`` is 1).
    hidden : int, default 10
        Hidden ReLU units.
    max_iter : int, default 200
        Maximum number of epochs.
    seed : int
        ``random_state`` of scikit-learn: seeds ``np.random.RandomState`` for the
        initialisation and the per-epoch shuffles.

    Returns
    -------
    MLPBinary
        Weights as scikit-learn's ``coefs_`` / ``intercepts_``, ``n_iter`` and
        ``loss_curve``.
    """
    hidden = check_positive_int(hidden, "hidden")
    max_iter = check_positive_int(max_iter, "max_iter")
    seed = _check_seed(seed)
    m, y = _check_data(x, y01)
    rs = np.random.RandomState(seed)
    weights = _init_weights(rs, m.shape[1], hidden)
    loss_curve = _train(m, y, weights, rs, max_iter)
    w0, b0, w1, b1 = weights
    if not all(np.isfinite(a).all() for a in (w0, b0, w1, b1)):
        raise PrivpubError("the fit produced non-finite weights")
    for a in (w0, b0, w1, b1):
        a.setflags(write=False)
    curve = np.array(loss_curve)
    curve.setflags(write=False)
    return MLPBinary(coefs=(w0, w1), intercepts=(b0, b1), n_iter=len(loss_curve),
                     loss_curve=curve)


def _check_seed(seed) -> int:
    """``seed`` as an int in ``[0, 2**32)`` (``np.random.RandomState``'s range)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise PrivpubError(f"seed must be an integer, got {seed!r}")
    seed = int(seed)
    if not 0 <= seed < 2**32:
        raise PrivpubError(f"seed must lie in [0, 2**32), got {seed}")
    return seed


def _check_data(x, y01) -> tuple[sp.csr_array, np.ndarray]:
    """``x`` as float64 CSR and ``y01`` as float64 0/1 labels, one per row, checked."""
    m = _as_csr(x)
    n, n_features = m.shape
    if n == 0 or n_features == 0:
        raise PrivpubError(f"x must have at least one row and one column, got {m.shape}")
    y = np.asarray(y01)
    if y.shape != (n,):
        raise PrivpubError(f"y01 must have one label per row ({n}), got shape {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise PrivpubError("y01 must hold only 0 and 1")
    y = y.astype(np.float64)
    if n_features > np.iinfo(np.int32).max:
        raise PrivpubError(f"x has too many columns ({n_features})")
    if not np.isfinite(m.data).all():
        raise PrivpubError("x holds NaN or infinite values")
    return m, y


def _init_weights(rs: np.random.RandomState, n_features: int, hidden: int) -> tuple:
    """``(W0, b0, W1, b1)``, scikit-learn's initialisation from ``rs``.

    ``rs = np.random.RandomState(seed)`` (``check_random_state``); nothing else draws from
    it before the initialisation (the label binarizer and the input checks do not;
    ``early_stopping=False`` means no validation split). :func:`_init_coef` for layer 0
    (``n_features -> H``) then layer 1 (``H -> 1``). ``W1`` is C-contiguous, so the kernel
    updates it through a flat view.
    """
    w0, b0 = _init_coef(rs, n_features, hidden)
    w1, b1 = _init_coef(rs, hidden, 1)
    return w0, b0, np.ascontiguousarray(w1), b1


def _train(m: sp.csr_array, y: np.ndarray, weights: tuple, rs: np.random.RandomState,
           max_iter: int) -> list[float]:
    """Run the epochs of scikit-learn's ``_fit_stochastic`` on ``weights`` (updated in
    place); returns the loss curve.

    Every epoch, ``shuffle(sample_idx, random_state=rs)``, i.e. ``perm = np.arange(n);
    rs.shuffle(perm); sample_idx = sample_idx[perm]`` (cumulative across epochs), in Python
    with the same calls (about 10% of the time, kept to keep the random stream); the
    minibatches are consecutive slices of ``sample_idx`` of ``batch_size = min(200, n)``
    rows, the last one shorter (``gen_batches``). Adam's step ``t += 1`` per minibatch, with
    ``lr_t = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)`` computed in Python with the same
    expression. Stopping (``tol = 1e-4``, ``n_iter_no_change = 10``, ``max_iter``): after
    each epoch, ``count += 1`` if ``loss > best_loss - tol`` else ``count = 0``; ``best_loss
    = min(best_loss, loss)``; stop when ``count > n_iter_no_change``.
    """
    w0, b0, w1, b1 = weights
    n = m.shape[0]
    indptr = m.indptr.astype(np.int64)
    indices = m.indices.astype(np.int32)
    data = np.ascontiguousarray(m.data, dtype=np.float64)
    binary = bool(np.all(data == 1.0))
    w1_flat = w1.reshape(-1)  # a view: the kernel updates w1 through it
    moments = [np.zeros(a.size) for a in (w0, w0, b0, b0, w1, w1, b1, b1)]
    batch_size = min(MAX_BATCH, n)
    n_batches = -(-n // batch_size)
    sample_idx = np.arange(n, dtype=int)
    t = 0
    loss_curve = []
    best_loss = np.inf
    no_improvement = 0
    for _ in range(max_iter):
        perm = np.arange(n)
        rs.shuffle(perm)
        sample_idx = sample_idx[perm]
        lrs = np.array([
            LEARNING_RATE_INIT * math.sqrt(1 - BETA_2**step) / (1 - BETA_1**step)
            for step in range(t + 1, t + n_batches + 1)
        ])
        accumulated = _epoch(indptr, indices, data, binary, y, sample_idx, batch_size, lrs,
                             w0, b0, w1_flat, b1, *moments,
                             ALPHA, BETA_1, BETA_2, EPSILON, _EPS64)
        t += n_batches
        loss = accumulated / n
        loss_curve.append(loss)
        if loss > best_loss - TOL:
            no_improvement += 1
        else:
            no_improvement = 0
        if loss < best_loss:
            best_loss = loss
        if no_improvement > N_ITER_NO_CHANGE:
            break
    return loss_curve
