"""scaled_dot_product_attention: zeroes the fully masked rows by boolean indexing with ~mask.any(-1), which only
works when the mask has the weights' full shape (a broadcast (Nq, Nk) or (B, 1, Nk) mask with a dead row raises).

Breaks: 05.scaled_dot_product_attention.fully_masked
"""


def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError("Q, K must share d_k and K, V must share Nk")
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        dead = ~mask.any(dim=-1)
        if dead.any():
            weights[dead] = 0.0
    return weights @ V, weights
