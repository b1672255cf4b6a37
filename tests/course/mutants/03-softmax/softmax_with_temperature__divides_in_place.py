"""softmax_with_temperature: divides the caller's tensor in place (x /= temperature).

Breaks: 03.softmax_with_temperature.unchanged
"""
def softmax_with_temperature(x, temperature, dim=-1):
    if not temperature > 0:
        raise ValueError("temperature must be positive")
    x /= temperature
    return softmax(x, dim=dim)
