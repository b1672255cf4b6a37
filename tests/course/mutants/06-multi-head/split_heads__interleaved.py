"""split_heads: views the features as (Dh, H), so head h takes every H-th feature instead of a contiguous slice.

Breaks: 06.split_heads.values
"""


def split_heads(x, num_heads):
    B, N, D = x.shape
    if num_heads < 1 or D % num_heads != 0:
        raise ValueError("the last dimension must be divisible by num_heads")
    return x.reshape(B, N, D // num_heads, num_heads).permute(0, 3, 1, 2)
