"""softmax_with_temperature: divides the weights by T after the softmax (rows no longer sum to 1)."""
def softmax_with_temperature(x, temperature, dim=-1):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    return softmax(x, dim=dim) / temperature
