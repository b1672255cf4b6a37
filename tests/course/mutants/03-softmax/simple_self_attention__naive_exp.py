"""simple_self_attention: writes the softmax inline without subtracting the max (overflows for long vectors).

Breaks: 03.simple_self_attention.stability
"""
def simple_self_attention(X):
    e = torch.exp(X @ X.transpose(-2, -1))
    return (e / e.sum(dim=-1, keepdim=True)) @ X
