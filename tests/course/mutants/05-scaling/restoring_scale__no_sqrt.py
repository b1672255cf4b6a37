"""restoring_scale: scale = 1 / variance (divides by the variance, not by the standard deviation).

Breaks: 05.restoring_scale.scale
"""
def restoring_scale(d, sigma_q, sigma_k):
    if d < 1 or sigma_q <= 0 or sigma_k <= 0:
        raise ValueError("d >= 1 and positive standard deviations")
    variance = float(d * sigma_q**2 * sigma_k**2)
    return variance, 1.0 / variance
