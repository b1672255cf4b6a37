"""softmax_with_temperature written out without calling softmax: (x - max) / T, exp, normalise.
"""
def softmax_with_temperature(x, temperature, dim=-1):
    if temperature <= 0:
        raise ValueError("the temperature must be > 0")
    z = (x - x.amax(dim=dim, keepdim=True)) / temperature
    e = torch.exp(z)
    return e / e.sum(dim=dim, keepdim=True)
