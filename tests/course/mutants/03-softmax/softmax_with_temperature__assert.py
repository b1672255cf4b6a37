"""softmax_with_temperature: validates with assert, raising AssertionError instead of ValueError.

Breaks: 03.softmax_with_temperature.errors
"""
def softmax_with_temperature(x, temperature, dim=-1):
    assert temperature > 0, "temperature must be positive"
    return softmax(x / temperature, dim=dim)
