"""split_heads: reshapes straight to (B, H, N, Dh) without the transpose, so a head holds whole tokens, not a feature slice.

Breaks: 06.split_heads.values
"""


def split_heads(x, num_heads):
    B, N, D = x.shape
    if num_heads < 1 or D % num_heads != 0:
        raise ValueError("the last dimension must be divisible by num_heads")
    return x.reshape(B, num_heads, N, D // num_heads)
