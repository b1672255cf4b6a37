"""score_variance: draws q and k with torch.rand (uniform on [0, 1)) instead of N(0, 1)."""


def score_variance(d, n_samples=10000, generator=None):
    if d < 1 or n_samples < 2:
        raise ValueError("d >= 1 and n_samples >= 2")
    q = torch.rand(n_samples, d, generator=generator)
    k = torch.rand(n_samples, d, generator=generator)
    return (q * k).sum(-1).var().item()
