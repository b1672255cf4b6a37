"""score_variance from one (n_samples, 2, d) draw split into queries and keys; the variance by hand."""
def score_variance(d, n_samples=10000, generator=None):
    if d < 1:
        raise ValueError("d must be positive")
    if n_samples < 2:
        raise ValueError("need two samples")
    qk = torch.randn(n_samples, 2, d, generator=generator, dtype=torch.float64)
    s = (qk[:, 0] * qk[:, 1]).sum(dim=1)
    return ((s - s.mean()).pow(2).sum() / (n_samples - 1)).item()
