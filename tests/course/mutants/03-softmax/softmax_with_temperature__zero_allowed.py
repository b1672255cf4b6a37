"""softmax_with_temperature: rejects negative temperatures but lets 0 through."""
def softmax_with_temperature(x, temperature, dim=-1):
    if temperature < 0:
        raise ValueError("temperature must be positive")
    return softmax(x / temperature, dim=dim)
