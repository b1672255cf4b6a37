"""softmax_with_temperature: no check on the temperature (T = 0 divides by zero, T < 0 flips the order).

Breaks: 03.softmax_with_temperature.errors
"""
def softmax_with_temperature(x, temperature, dim=-1):
    return softmax(x / temperature, dim=dim)
