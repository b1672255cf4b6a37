"""score_variance: always draws 10000 samples whatever n_samples says.

Breaks: 05.score_variance.sampling_error
"""


def score_variance(d, n_samples=10000, generator=None):
    if d < 1 or n_samples < 2:
        raise ValueError("d >= 1 and n_samples >= 2")
    q = torch.randn(10000, d, generator=generator)
    k = torch.randn(10000, d, generator=generator)
    return (q * k).sum(-1).var().item()
