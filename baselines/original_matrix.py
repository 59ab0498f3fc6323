"""The original binary matrix, released unchanged: the non-private yardstick of epasto2022.

Gives Table 2's dataset statistics (through the ``matrix_*`` metrics of
:mod:`privpub.metrics.matrix_stats`) and the "original data" reference line of Fig. 4 / Fig. 7
(the classifier trained on the unanonymised features). Privacy ``none``, role ``reference``.
"""

from __future__ import annotations

from privpub.algorithms.binary import check_binary_input
from privpub.registry import NO_PRIVACY, register_mechanism
from privpub.types import Kind

__all__ = ["original_matrix"]


@register_mechanism(
    "original_matrix",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=NO_PRIVACY,
    paper="epasto2022",
    role="reference",
)
def original_matrix(matrix, *, rng=None):
    """The input matrix as a canonical int8 CSR copy (no privacy; epasto2022 Table 2, Fig. 4).

    Parameters
    ----------
    matrix : users x items 0/1 matrix
    rng : numpy.random.Generator, optional
        Unused (the registry's calling convention).
    """
    return check_binary_input(matrix)
