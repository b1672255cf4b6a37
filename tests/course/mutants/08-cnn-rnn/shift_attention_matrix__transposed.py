"""shift_attention_matrix: puts the 1 at [i + offset, i] (the transpose), which shifts the wrong way.

Breaks: 08.shift_attention_matrix.values
"""
def shift_attention_matrix(n, offset):
    index = torch.arange(n)
    return (index[:, None] == index[None, :] + offset).float()
