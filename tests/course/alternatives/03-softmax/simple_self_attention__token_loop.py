"""simple_self_attention one output token at a time: weights of token i, then the weighted sum of the rows.
"""
def simple_self_attention(X):
    outputs = []
    for i in range(X.shape[-2]):
        w = softmax((X * X[..., i : i + 1, :]).sum(dim=-1), dim=-1)  # (..., N)
        outputs.append((w.unsqueeze(-1) * X).sum(dim=-2))  # (..., D)
    return torch.stack(outputs, dim=-2)
