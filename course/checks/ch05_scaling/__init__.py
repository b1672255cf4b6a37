"""Hidden checks for 05-scaling.

Ground truths: the closed form Var(q·k) = d and the sampling error of a variance
estimate (score_variance); ``F.scaled_dot_product_attention`` and the formula
softmax(Q K^T / sqrt(d_k)) V evaluated in float64 on the CPU (attention); for the
module, the same formula applied to the q/k/v weights read back from the
student's layers.
"""
from autograder.checking import contract_clauses

from .shared import A, ASSIGNMENT, CONTRACT, SDPA_FORBIDDEN  # noqa: F401 - the contract's names and numbers

CLAUSES = contract_clauses(__file__, globals())

# the checks register themselves when their modules are imported: variance.py (score_variance,
# restoring_scale), attention.py (scaled_dot_product_attention, SelfAttention)
from . import attention, variance  # noqa: E402,F401
