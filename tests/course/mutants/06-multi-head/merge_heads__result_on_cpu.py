"""merge_heads: converts the result with torch.as_tensor(..., device="cpu"), so a GPU input gives a CPU result.

Breaks: 06.merge_heads.device
"""


def merge_heads(x):
    B, H, N, Dh = x.shape
    return torch.as_tensor(x.transpose(1, 2).reshape(B, N, H * Dh), device="cpu")
