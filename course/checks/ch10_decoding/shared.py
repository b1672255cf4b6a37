"""ch10_decoding: what its modules share: the assignment, its contract names and forbidden routines."""
import torch

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


def _tensor_or_fail(ctx, value, prop: str, inputs: str) -> torch.Tensor:
    if type(value) is not torch.Tensor:
        ctx.fail(prop, f"expected a torch.Tensor, got {type(value).__name__}", inputs)
    return value

# The size at which the grader measures, from outside the student's kernel, the memory one call of
# blockwise_attention takes (the sandbox's cgroup: Context.measure_memory): Q (MEMORY_LEAD, MEMORY_NQ,
# MEMORY_D), K and V (MEMORY_LEAD, MEMORY_NK, MEMORY_D) on the CPU, block_size MEMORY_BLOCK; at most
# MEMORY_LIMIT_MIB. Few queries and many keys: the whole score matrix is large, one block small, and an
# answer that tiles the queries too still makes few blocks.
MEMORY_LEAD, MEMORY_NQ, MEMORY_NK, MEMORY_D, MEMORY_BLOCK = 1, 1024, 65536, 4, 256
MEMORY_WHOLE_MIB = MEMORY_LEAD * MEMORY_NQ * MEMORY_NK * 4 // 2**20  # the float32 (..., Nq, Nk) scores: 256
MEMORY_BLOCK_MIB = MEMORY_LEAD * MEMORY_NQ * MEMORY_BLOCK * 4 // 2**20  # one block's scores: 1
MEMORY_LIMIT_MIB = MEMORY_WHOLE_MIB // 2  # half the whole matrix: 128
