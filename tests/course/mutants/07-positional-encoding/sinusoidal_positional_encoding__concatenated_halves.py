"""sinusoidal_positional_encoding: all sines in the first half and all cosines in the second, not interleaved.

Breaks: 07.sinusoidal_positional_encoding.values
"""
def sinusoidal_positional_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("d_model must be even")
    position = torch.arange(num_positions, dtype=torch.float32).unsqueeze(1)
    angle = position / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return torch.cat([torch.sin(angle), torch.cos(angle)], dim=1)
