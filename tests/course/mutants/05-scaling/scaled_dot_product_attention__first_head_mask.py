"""scaled_dot_product_attention: a 4-D (B, H, Nq, Nk) mask is read as head 0's mask for every head (as if heads
always shared one mask).

Breaks: 05.scaled_dot_product_attention.mask
"""


def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError("Q, K must share d_k and K, V must share Nk")
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        if mask.dim() == 4:
            mask = mask[:, :1]
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return weights @ V, weights
