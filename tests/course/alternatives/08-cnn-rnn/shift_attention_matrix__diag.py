"""shift_attention_matrix: torch.diag of a ones vector on the offset-th diagonal, guarded for |offset| >= n."""
def shift_attention_matrix(n, offset):
    if abs(offset) >= n:
        return torch.zeros(n, n)
    return torch.diag(torch.ones(n - abs(offset)), diagonal=offset)
