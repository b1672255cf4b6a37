"""additive_scores with einsum for the reduction against w."""
def additive_scores(Q, K, w):
    pairs = Q[..., :, None, :] + K[..., None, :, :]
    return torch.einsum("...ijd,d->...ij", torch.tanh(pairs), w)
