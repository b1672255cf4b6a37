"""score_variance: ignores the generator argument (draws from the global random state).

Breaks: 05.score_variance.generator
"""


def score_variance(d, n_samples=10000, generator=None):
    if d < 1 or n_samples < 2:
        raise ValueError("d >= 1 and n_samples >= 2")
    q = torch.randn(n_samples, d)
    k = torch.randn(n_samples, d)
    return (q * k).sum(-1).var().item()
