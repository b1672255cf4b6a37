"""split_heads: ends with .cpu() (left over from printing the heads), so a GPU input gives a CPU result.

Breaks: 06.split_heads.device
"""


def split_heads(x, num_heads):
    B, N, D = x.shape
    if num_heads < 1 or D % num_heads != 0:
        raise ValueError(f"the last dimension ({D}) must be divisible by num_heads ({num_heads})")
    return x.reshape(B, N, num_heads, D // num_heads).transpose(1, 2).cpu()
