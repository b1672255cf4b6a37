"""split_heads: multiplies by an identity built on the CPU (torch.eye(Dh), no device=) to get a fresh contiguous
copy: right on the CPU; on a GPU the CPU identity meets a CUDA x and raises.

Breaks: 06.split_heads.device
"""
def split_heads(x, num_heads):
    B, N, D = x.shape
    if num_heads < 1 or D % num_heads:
        raise ValueError("the last dimension must be divisible by num_heads")
    heads = x.view(B, N, num_heads, D // num_heads).transpose(1, 2)  # (B, H, N, Dh)
    return heads @ torch.eye(D // num_heads, dtype=x.dtype)
