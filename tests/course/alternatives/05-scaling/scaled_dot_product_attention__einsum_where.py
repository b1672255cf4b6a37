"""scaled_dot_product_attention with einsum, the scale applied to Q first (out of place), and torch.where for the mask."""
def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError("d_k differs")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError("Nk differs")
    scores = torch.einsum("...qd,...kd->...qk", Q * Q.shape[-1] ** -0.5, K)
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return torch.einsum("...qk,...kv->...qv", weights, V), weights
