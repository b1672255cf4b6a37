"""softmax_with_temperature: rejects negative temperatures but lets 0 through.

Breaks: 03.softmax_with_temperature.errors
"""
def softmax_with_temperature(x, temperature, dim=-1):
    if temperature < 0:
        raise ValueError("temperature must be positive")
    return softmax(x / temperature, dim=dim)
