"""attention_weights: writes the softmax inline without subtracting the max (overflows for long vectors).

Breaks: 03.attention_weights.stability
"""
def attention_weights(X):
    e = torch.exp(X @ X.transpose(-2, -1))
    return e / e.sum(dim=-1, keepdim=True)
