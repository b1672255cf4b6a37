"""scaled_dot_product_attention: fills masked scores with -1e9, so a fully masked query attends uniformly to every key.

Breaks: 05.scaled_dot_product_attention.fully_masked
"""


def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError("Q, K must share d_k and K, V must share Nk")
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
