"""softmax_with_temperature: multiplies the scores by T instead of dividing."""
def softmax_with_temperature(x, temperature, dim=-1):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    return softmax(x * temperature, dim=dim)
