"""softmax_with_temperature: validates with assert, raising AssertionError instead of ValueError."""
def softmax_with_temperature(x, temperature, dim=-1):
    assert temperature > 0, "temperature must be positive"
    return softmax(x / temperature, dim=dim)
