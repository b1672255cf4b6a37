"""apply_rope with complex numbers: each pair is x_2i + i x_2i+1, multiplied by exp(i n omega_i) (as in many LLaMA ports)."""
def apply_rope(x):
    *lead, N, d = x.shape
    if d % 2 != 0:
        raise ValueError(f"last dimension must be even, got {d}")
    omega = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d))
    angles = torch.outer(torch.arange(N, dtype=torch.float64, device=x.device), omega)
    z = torch.view_as_complex(x.double().reshape(*lead, N, d // 2, 2).contiguous())
    out = torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles))
    return out.reshape(x.shape).to(x.dtype)
