"""shift_attention_matrix: torch.diag(ones(n - |offset|)) fails for |offset| > n instead of giving zeros.

Breaks: 08.shift_attention_matrix.values
"""
def shift_attention_matrix(n, offset):
    return torch.diag(torch.ones(n - abs(offset)), diagonal=offset)
