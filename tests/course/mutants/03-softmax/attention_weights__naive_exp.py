"""attention_weights: writes the softmax inline without subtracting the max (overflows for long vectors)."""
def attention_weights(X):
    e = torch.exp(X @ X.transpose(-2, -1))
    return e / e.sum(dim=-1, keepdim=True)
