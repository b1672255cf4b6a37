"""softmax_with_temperature: casts the scores to float32 first.

Breaks: 03.softmax_with_temperature.dtype
"""
def softmax_with_temperature(x, temperature, dim=-1):
    if not temperature > 0:
        raise ValueError("temperature must be positive")
    return softmax(x.float() / temperature, dim=dim)
