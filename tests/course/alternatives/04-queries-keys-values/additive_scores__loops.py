"""additive_scores with an explicit loop over the keys (one column at a time), then stack."""
def additive_scores(Q, K, w):
    columns = [torch.tanh(Q + K[..., j : j + 1, :]) @ w for j in range(K.shape[-2])]
    return torch.stack(columns, dim=-1)
