"""split_heads with unflatten and permute, and an explicit type check of num_heads."""


def split_heads(x, num_heads):
    if num_heads < 1 or x.shape[-1] % num_heads:
        raise ValueError(f"{x.shape[-1]} features cannot be split into {num_heads} heads")
    return x.unflatten(-1, (num_heads, -1)).permute(0, 2, 1, 3)
