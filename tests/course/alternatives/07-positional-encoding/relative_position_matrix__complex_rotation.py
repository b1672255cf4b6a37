"""relative_position_matrix read off a complex exponential: block entries are Re/Im of exp(i k omega)."""
def relative_position_matrix(k, d_model):
    omega = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    z = torch.polar(torch.ones_like(omega), k * omega)  # cos + i sin
    M = torch.zeros(d_model, d_model)
    idx = torch.arange(0, d_model, 2)
    M[idx, idx] = z.real.float()
    M[idx, idx + 1] = z.imag.float()
    M[idx + 1, idx] = -z.imag.float()
    M[idx + 1, idx + 1] = z.real.float()
    return M
