"""relative_position_matrix: the sine terms have the wrong signs (the transpose), which shifts by -k.

Breaks: 07.relative_position_matrix.values
"""
def relative_position_matrix(k, d_model):
    omega = 1.0 / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    c, s = torch.cos(k * omega), torch.sin(k * omega)
    M = torch.zeros(d_model, d_model, dtype=torch.float64)
    M[0::2, 0::2] = torch.diag(c)
    M[0::2, 1::2] = torch.diag(-s)
    M[1::2, 0::2] = torch.diag(s)
    M[1::2, 1::2] = torch.diag(c)
    return M.float()
