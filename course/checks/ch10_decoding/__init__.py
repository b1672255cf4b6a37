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
  student may not call it). Whether the answer formed the ``(..., Nq, Nk)`` score matrix is read
  from the recorder that watches graded calls with forbidden routines: it keeps the size of the
  largest floating-point tensor a call created (``ctx.largest_created``), which the student's
  code cannot see or change.
* ``greedy_generate``: the given ``PrefixMeanLM`` of the notebook, its logits written out here
  as a closed form (the mean embedding of the prefix and the last token's embedding through the
  head), on the whole prefix at every step; its call log says how the student fed it.
"""
import torch

from autograder.checking import contract_clauses

A = ASSIGNMENT = "10"
CONTRACT = ["causal_mask", "CausalSelfAttention", "blockwise_attention", "greedy_generate"]

SOFTMAX_FORBIDDEN = (
    "torch.softmax", "torch.nn.functional.softmax", "torch.nn.Softmax", "torch.Tensor.softmax", "torch.special.softmax",
    "torch.log_softmax", "torch.nn.functional.log_softmax", "torch.nn.LogSoftmax", "torch.Tensor.log_softmax",
    "torch.special.log_softmax",
)
LAYER_FORBIDDEN = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
)
CSA_FORBIDDEN = LAYER_FORBIDDEN
# Leaving PyTorch would hide the scores from the recorder that grades the memory clause.
BLOCKWISE_FORBIDDEN = LAYER_FORBIDDEN + SOFTMAX_FORBIDDEN + ("torch.Tensor.numpy",)

CLAUSES = contract_clauses(__file__, globals())


def _tensor_or_fail(ctx, value, prop: str, inputs: str) -> torch.Tensor:
    if type(value) is not torch.Tensor:
        ctx.fail(prop, f"expected a torch.Tensor, got {type(value).__name__}", inputs)
    return value

# the checks register themselves when their modules are imported: layer.py (causal_mask,
# CausalSelfAttention), blockwise.py (blockwise_attention), generation.py (greedy_generate)
from . import blockwise, generation, layer  # noqa: E402,F401
