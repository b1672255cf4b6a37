"""scaled_dot_product_attention with a hand-written softmax: masked scores -inf, the row maximum subtracted
(a floor for rows with no key), exp, divided by the row sum (a floor, so an empty row stays 0)."""
def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError("Q and K differ in d_k")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError("K and V differ in Nk")
    scores = (Q / math.sqrt(Q.shape[-1])) @ K.transpose(-2, -1)
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device))
    top = scores.amax(dim=-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).min)
    e = torch.exp(scores - top)
    weights = e / e.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)
    return weights @ V, weights
