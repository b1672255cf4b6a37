"""Hidden checks for 10-decoding.

Ground truths, all computed here in float64 on the CPU from the grader's own inputs and weights:

* ``causal_mask``: index arithmetic (``j <= i``).
* ``CausalSelfAttention``: ``torch.nn.MultiheadAttention`` with a causal ``attn_mask``, holding the
  weights the grader copied into the student's module. Grouped-query attention is checked as the
  multi-head layer whose key and value projections repeat each key/value head's rows for the
  ``num_heads // num_kv_heads`` query heads that share it (query head h reads key/value head
  ``h // group``), so the truth never runs a grouped-query code path of its own. Caches are the
  projections ``x W_k^T + b_k`` split into key/value heads.
* ``blockwise_attention``: ``F.scaled_dot_product_attention`` with an explicit boolean mask (the
  student may not call it). Whether the answer formed the ``(..., Nq, Nk)`` score matrix is
  decided from outside the student's kernel: the memory one call takes at a size where the whole
  matrix is twice the limit (``ctx.measure_memory``: the sandbox's cgroup, which no code in
  the kernel can rewrite); the recorder in the student's process (``ctx.largest_created``, the size
  of the largest floating-point tensor a call created) is a second witness, and the only one in
  plain nbgrader.
* ``greedy_generate``: the given ``PrefixMeanLM`` of the notebook, its logits written out here
  as a closed form (the mean embedding of the prefix and the last token's embedding through the
  head), on the whole prefix at every step; its call log says how the student fed it.
"""
from autograder.checking import contract_clauses

from .shared import (A, ASSIGNMENT, BLOCKWISE_FORBIDDEN, CONTRACT, CSA_FORBIDDEN, LAYER_FORBIDDEN, MEMORY_BLOCK, MEMORY_BLOCK_MIB,  # noqa: F401 - the contract's names and numbers
                     MEMORY_D, MEMORY_LEAD, MEMORY_LIMIT_MIB, MEMORY_NK, MEMORY_NQ, MEMORY_WHOLE_MIB, SOFTMAX_FORBIDDEN)

CLAUSES = contract_clauses(__file__, globals())

# the checks register themselves when their modules are imported: layer.py (causal_mask,
# CausalSelfAttention), blockwise.py (blockwise_attention), generation.py (greedy_generate)
from . import blockwise, generation, layer  # noqa: E402,F401
