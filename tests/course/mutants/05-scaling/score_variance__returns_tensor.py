"""score_variance: returns a 0-d tensor instead of a Python float.

Breaks: 05.score_variance.float
"""


def score_variance(d, n_samples=10000, generator=None):
    if d < 1 or n_samples < 2:
        raise ValueError("d >= 1 and n_samples >= 2")
    q = torch.randn(n_samples, d, generator=generator)
    k = torch.randn(n_samples, d, generator=generator)
    return (q * k).sum(-1).var()
