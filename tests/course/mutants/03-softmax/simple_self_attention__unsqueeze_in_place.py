"""simple_self_attention: adds a batch dimension in place (X.unsqueeze_(0)), changing the caller's X.

Breaks: 03.simple_self_attention.unchanged
"""
def simple_self_attention(X):
    X.unsqueeze_(0)
    out = softmax(X @ X.transpose(-2, -1), dim=-1) @ X
    return out.squeeze(0)
