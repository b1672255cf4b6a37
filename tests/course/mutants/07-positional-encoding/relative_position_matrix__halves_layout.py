"""relative_position_matrix: builds the rotation for a [sin | cos] halves layout instead of interleaved pairs.

Breaks: 07.relative_position_matrix.values
"""
def relative_position_matrix(k, d_model):
    h = d_model // 2
    omega = 1.0 / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    c, s = torch.diag(torch.cos(k * omega)), torch.diag(torch.sin(k * omega))
    return torch.cat([torch.cat([c, s], 1), torch.cat([-s, c], 1)], 0).float()
