"""score_variance: n_samples defaults to 1000 instead of the 10000 the contract names.

Breaks: 05.score_variance.default_n
"""
def score_variance(d, n_samples=1000, generator=None):
    if d < 1 or n_samples < 2:
        raise ValueError("d >= 1 and n_samples >= 2")
    q = torch.randn(n_samples, d, generator=generator, dtype=torch.float64)
    k = torch.randn(n_samples, d, generator=generator, dtype=torch.float64)
    return (q * k).sum(-1).var().item()
