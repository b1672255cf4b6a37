"""Hidden checks for 06-multi-head.

Ground truths: ``reshape`` + ``transpose`` for the head split and merge; the
per-head maps stacked by rows for ``stack_head_projections``;
``torch.nn.MultiheadAttention`` (batch_first, per-head weights, float64 on the CPU)
holding weights the grader chose. Truths never come from the student's state: every
check that runs the module first copies grader-drawn values into its ``q_proj``,
``k_proj``, ``v_proj`` and ``out_proj`` (in place, through ``ctx.method(param,
"copy_", ...)``), so a module that zeroes or otherwise rigs its own weights gains
nothing, and one that does not follow its weights fails. Masks are checked as
properties of the same module (masked keys get 0, the others keep their unmasked
proportions), so a wrong scale is reported once, by the clause about values.
"""
from autograder.checking import contract_clauses

from .shared import A, ASSIGNMENT, CONTRACT, MHSA_FORBIDDEN  # noqa: F401 - the contract's names and numbers

CLAUSES = contract_clauses(__file__, globals())

# the checks register themselves when their modules are imported: heads.py (split_heads, merge_heads,
# stack_head_projections), attention.py (MultiHeadSelfAttention), loading.py (load_torch_weights)
from . import attention, heads, loading  # noqa: E402,F401
from .attention import closed_form_truth, read_weights, set_weights, torch_truth  # noqa: E402,F401 - used by 09's and 10's checks
