"""score_variance: no ValueError for d < 1 or a single sample (returns nan or 0).

Breaks: 05.score_variance.errors
"""


def score_variance(d, n_samples=10000, generator=None):
    q = torch.randn(n_samples, max(d, 0), generator=generator)
    k = torch.randn(n_samples, max(d, 0), generator=generator)
    return (q * k).sum(-1).var().item()
