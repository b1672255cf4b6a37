"""split_heads: the source material's reshape (B, N, D) -> (-1, B, N, D/h), i.e. heads first.

Breaks: 06.split_heads.values
"""


def split_heads(x, num_heads):
    B, N, D = x.shape
    if num_heads < 1 or D % num_heads != 0:
        raise ValueError("the last dimension must be divisible by num_heads")
    return x.reshape(-1, B, N, D // num_heads)
