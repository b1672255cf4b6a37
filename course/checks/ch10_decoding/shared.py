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
