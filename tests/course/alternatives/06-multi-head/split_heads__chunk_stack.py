"""split_heads with torch.chunk along the features and torch.stack of the pieces as a new head axis."""


def split_heads(x, num_heads):
    D = x.shape[-1]
    if num_heads < 1 or D % num_heads != 0:
        raise ValueError("the last dimension must be divisible by num_heads")
    return torch.stack(torch.split(x, D // num_heads, dim=-1), dim=1)  # (B, H, N, Dh)
