"""scaled_dot_product_attention that broadcasts the mask to the scores' shape first, then zeroes the fully
masked rows by boolean indexing on a copy."""
def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError("Q and K must share d_k, K and V must share Nk")
    scores = torch.matmul(Q, K.transpose(-2, -1)) * (1.0 / math.sqrt(Q.shape[-1]))
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        full = torch.broadcast_to(mask, scores.shape)
        weights = torch.softmax(scores.masked_fill(~full, float("-inf")), dim=-1).clone()
        weights[~full.any(dim=-1)] = 0.0
    return torch.matmul(weights, V), weights
