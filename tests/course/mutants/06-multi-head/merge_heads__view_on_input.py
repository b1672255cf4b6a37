"""merge_heads: calls view on its input (fine for split_heads' contiguous output here), so a transposed input raises.

Breaks: 06.merge_heads.values
"""


def split_heads(x, num_heads):
    B, N, D = x.shape
    if num_heads < 1 or D % num_heads != 0:
        raise ValueError(f"the last dimension ({D}) must be divisible by num_heads ({num_heads})")
    return x.reshape(B, N, num_heads, D // num_heads).transpose(1, 2).contiguous()  # (B, H, N, Dh), a copy


def merge_heads(x):
    B, H, N, Dh = x.shape
    rows = x.view(B * H, N, Dh)  # one row per (batch, head): needs a contiguous input
    return torch.stack([torch.cat(list(rows[b * H : (b + 1) * H]), dim=-1) for b in range(B)])  # (B, N, H*Dh)
