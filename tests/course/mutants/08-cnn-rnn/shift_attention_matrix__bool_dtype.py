"""shift_attention_matrix: returns a bool matrix instead of float32.

Breaks: 08.shift_attention_matrix.dtype
"""
def shift_attention_matrix(n, offset):
    index = torch.arange(n)
    return index[None, :] == index[:, None] + offset
