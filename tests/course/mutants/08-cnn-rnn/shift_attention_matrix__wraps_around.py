"""shift_attention_matrix: rolls the identity, so tokens wrap around instead of zero padding.

Breaks: 08.shift_attention_matrix.values
"""
def shift_attention_matrix(n, offset):
    return torch.roll(torch.eye(n), shifts=offset, dims=1)
