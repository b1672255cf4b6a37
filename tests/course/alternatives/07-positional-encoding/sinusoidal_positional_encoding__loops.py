"""sinusoidal_positional_encoding with two Python loops and math.sin / math.cos, one entry at a time."""
import math

def sinusoidal_positional_encoding(num_positions, d_model):
    if d_model % 2 == 1:
        raise ValueError("d_model must be even")
    rows = []
    for p in range(num_positions):
        row = []
        for i in range(d_model // 2):
            angle = p / 10000 ** (2 * i / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(num_positions, d_model)
