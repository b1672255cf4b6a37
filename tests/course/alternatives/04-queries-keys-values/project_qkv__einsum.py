"""project_qkv with torch.einsum over the feature index."""
def project_qkv(X, W_q, W_k, W_v):
    return tuple(torch.einsum("...ni,ik->...nk", X, W) for W in (W_q, W_k, W_v))
