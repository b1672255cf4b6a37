"""attention_weights one query token at a time, stacked along the query dimension.
"""
def attention_weights(X):
    rows = []
    for i in range(X.shape[-2]):
        scores = (X * X[..., i : i + 1, :]).sum(dim=-1)  # (..., N): token i against every token
        rows.append(softmax(scores, dim=-1))
    return torch.stack(rows, dim=-2)
