"""causal_mask by comparing position indices: arange(n)[None, :] <= arange(n)[:, None]."""


def causal_mask(n, device=None):
    positions = torch.arange(n, device=device)
    return positions[None, :] <= positions[:, None]
