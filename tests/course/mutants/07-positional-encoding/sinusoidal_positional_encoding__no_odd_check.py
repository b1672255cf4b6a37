"""sinusoidal_positional_encoding: accepts an odd d_model (the last sine has no cosine) instead of raising ValueError.

Breaks: 07.sinusoidal_positional_encoding.errors
"""
def sinusoidal_positional_encoding(num_positions, d_model):
    position = torch.arange(num_positions, dtype=torch.float32).unsqueeze(1)
    angle = position / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe
