"""score_variance: uses q·q (one vector with itself) instead of two independent vectors.

Breaks: 05.score_variance.close_to_d
"""


def score_variance(d, n_samples=10000, generator=None):
    if d < 1 or n_samples < 2:
        raise ValueError("d >= 1 and n_samples >= 2")
    q = torch.randn(n_samples, d, generator=generator)
    return (q * q).sum(-1).var().item()
