"""scaled_dot_product_attention: no shape validation (a d_k mismatch raises RuntimeError, a length mismatch too).

Breaks: 05.scaled_dot_product_attention.errors
"""


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(K.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)
    return weights @ V, weights
