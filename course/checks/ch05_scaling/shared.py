"""ch05_scaling: what its modules share: the assignment, its contract names and forbidden routines."""


A = ASSIGNMENT = "05"
CONTRACT = ["score_variance", "scaled_dot_product_attention", "SelfAttention", "restoring_scale"]
SDPA_FORBIDDEN = ("torch.nn.functional.scaled_dot_product_attention",)
