"""sinusoidal_positional_encoding: exponent i/d instead of 2i/d (frequencies fall too slowly).

Breaks: 07.sinusoidal_positional_encoding.values
"""
def sinusoidal_positional_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("d_model must be even")
    position = torch.arange(num_positions, dtype=torch.float32).unsqueeze(1)
    i = torch.arange(d_model // 2, dtype=torch.float32)
    angle = position / 10000 ** (i / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
