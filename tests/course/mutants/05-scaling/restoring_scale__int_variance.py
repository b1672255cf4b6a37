"""restoring_scale: no conversion to float, so int arguments give an int variance.

Breaks: 05.restoring_scale.floats
"""
def restoring_scale(d, sigma_q, sigma_k):
    if d < 1 or sigma_q <= 0 or sigma_k <= 0:
        raise ValueError("d >= 1 and positive standard deviations")
    variance = d * sigma_q**2 * sigma_k**2
    return variance, 1 / math.sqrt(variance)
