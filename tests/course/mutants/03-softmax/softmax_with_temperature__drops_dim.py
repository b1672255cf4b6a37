"""softmax_with_temperature: forgets to pass dim on to softmax.

Breaks: 03.softmax_with_temperature.values
"""
def softmax_with_temperature(x, temperature, dim=-1):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    return softmax(x / temperature)
