"""softmax_with_temperature multiplying by 1 / temperature, with the check written as a negated comparison.
"""
def softmax_with_temperature(x, temperature, dim=-1):
    if not (temperature > 0):
        raise ValueError(f"expected a positive temperature, got {temperature!r}")
    return softmax(x * (1.0 / temperature), dim=dim)
