"""scaled_dot_product_attention: masks the scores with -inf (correctly), then exp / sum exp without subtracting
the maximum: inf / inf = NaN once a score is in the thousands.

Breaks: 05.scaled_dot_product_attention.stable
"""
def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError("Q, K must share d_k and K, V must share Nk")
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    e = torch.exp(scores)
    total = e.sum(dim=-1, keepdim=True)
    weights = torch.where(total > 0, e / total.clamp_min(1e-300), torch.zeros_like(e))
    return weights @ V, weights
