"""relative_position_matrix: rotates every pair by the angle k, forgetting the pair's frequency.

Breaks: 07.relative_position_matrix.values
"""
def relative_position_matrix(k, d_model):
    c, s = torch.cos(torch.tensor(float(k))), torch.sin(torch.tensor(float(k)))
    block = torch.stack([torch.stack([c, s]), torch.stack([-s, c])])
    return torch.block_diag(*[block] * (d_model // 2)).float()
