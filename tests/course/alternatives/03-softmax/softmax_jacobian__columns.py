"""softmax_jacobian one column at a time: column j is s * (e_j - s_j), stacked along the last dimension.
"""
def softmax_jacobian(x):
    s = softmax(x, dim=-1)
    n = x.shape[-1]
    columns = []
    for j in range(n):
        e_j = torch.zeros(n, dtype=x.dtype, device=x.device)
        e_j[j] = 1.0
        columns.append(s * (e_j - s[..., j : j + 1]))
    return torch.stack(columns, dim=-1)
