"""sinusoidal_positional_encoding: cosines in the even columns and sines in the odd ones.

Breaks: 07.sinusoidal_positional_encoding.values
"""
def sinusoidal_positional_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("d_model must be even")
    position = torch.arange(num_positions, dtype=torch.float32).unsqueeze(1)
    angle = position / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.cos(angle)
    pe[:, 1::2] = torch.sin(angle)
    return pe
