"""score_variance with einsum for the dot products and the biased (divide by n) variance, in float32."""
def score_variance(d, n_samples=10000, generator=None):
    if d < 1 or n_samples < 2:
        raise ValueError("need d >= 1 and n_samples >= 2")
    q = torch.randn(n_samples, d, generator=generator)
    k = torch.randn(n_samples, d, generator=generator)
    s = torch.einsum("nd,nd->n", q, k)
    return float(((s - s.mean()) ** 2).mean())
