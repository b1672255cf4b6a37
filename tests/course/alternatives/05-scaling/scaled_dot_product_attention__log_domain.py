"""scaled_dot_product_attention in the log domain: weights = exp(s - logsumexp(s)), with a finite floor for
fully masked rows and the mask applied again after the softmax."""
def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.size(-1) != K.size(-1) or K.size(-2) != V.size(-2):
        raise ValueError("shape mismatch between Q, K, V")
    s = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(K.size(-1))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
        any_key = mask.any(dim=-1, keepdim=True)
        s = torch.where(any_key, s, torch.zeros_like(s))  # a row with no key: finite, zeroed below
    weights = torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True))
    if mask is not None:
        weights = weights * any_key
    return weights @ V, weights
