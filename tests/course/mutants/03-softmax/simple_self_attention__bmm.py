"""simple_self_attention: uses torch.bmm, which takes exactly one batch dimension.

Breaks: 03.simple_self_attention.values
"""
def simple_self_attention(X):
    if X.dim() == 2:
        return softmax(X @ X.T, dim=-1) @ X
    return torch.bmm(softmax(torch.bmm(X, X.transpose(1, 2)), dim=-1), X)
