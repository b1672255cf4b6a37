"""scaled_dot_product_attention: masks the softmax weights afterwards and renormalises each row (exact in real
arithmetic, but a masked key that dominates by more than float32's exp range leaves the allowed keys 0 / 0).

Breaks: 05.scaled_dot_product_attention.mask_dominated
"""


def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError("Q, K must share d_k and K, V must share Nk")
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-30)  # a fully masked row stays 0
    return weights @ V, weights
