"""softmax_with_temperature: moves the result to the CPU (.cpu()) "to print it".

Breaks: 03.softmax_with_temperature.device
"""
def softmax_with_temperature(x, temperature, dim=-1):
    if not temperature > 0:
        raise ValueError("temperature must be positive")
    return softmax(x / temperature, dim=dim).cpu()
