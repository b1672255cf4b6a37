"""sinusoidal_positional_encoding: computes and returns the table in float64 instead of float32.

Breaks: 07.sinusoidal_positional_encoding.dtype
"""
def sinusoidal_positional_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("d_model must be even")
    position = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)
    angle = position / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(num_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
