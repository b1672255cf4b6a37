"""merge_heads: reshapes (B, H, N, Dh) straight to (B, N, H*Dh) without moving the head axis back.

Breaks: 06.merge_heads.values
"""


def merge_heads(x):
    B, H, N, Dh = x.shape
    return x.reshape(B, N, H * Dh)
