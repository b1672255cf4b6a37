"""merge_heads: moves the head axis last, (B, N, Dh, H), so the features of the heads are interleaved.

Breaks: 06.merge_heads.values
"""


def merge_heads(x):
    B, H, N, Dh = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, N, H * Dh)
