"""sinusoidal_positional_encoding with exp(-log(10000) 2i/d) frequencies and stack/flatten interleaving, in float64 then cast."""
import math

def sinusoidal_positional_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError(f"odd d_model {d_model}")
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angle = torch.outer(torch.arange(num_positions, dtype=torch.float64), freq)
    return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1).float()
