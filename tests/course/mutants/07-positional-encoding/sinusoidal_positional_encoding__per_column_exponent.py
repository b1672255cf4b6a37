"""sinusoidal_positional_encoding: uses the column index j in 10000^(j/d), so sin and cos of a pair get different frequencies.

Breaks: 07.sinusoidal_positional_encoding.values
"""
def sinusoidal_positional_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("d_model must be even")
    position = torch.arange(num_positions, dtype=torch.float32).unsqueeze(1)
    angle = position / 10000 ** (torch.arange(d_model, dtype=torch.float32) / d_model)
    pe = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, 1::2])
    return pe
