"""ch06_multi_head: what its modules share: the assignment, its contract names and forbidden routines."""


A = ASSIGNMENT = "06"
CONTRACT = ["split_heads", "merge_heads", "MultiHeadSelfAttention", "load_torch_weights", "stack_head_projections"]
MHSA_FORBIDDEN = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
)
