"""merge_heads: transposes the batch and head axes (0, 1) instead of heads and tokens, mixing sentences.

Breaks: 06.merge_heads.values
"""


def merge_heads(x):
    B, H, N, Dh = x.shape
    return x.transpose(0, 1).reshape(B, N, H * Dh)
