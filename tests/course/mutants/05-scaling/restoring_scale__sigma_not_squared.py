"""restoring_scale: writes the variance as d sigma_q sigma_k (standard deviations where variances belong);
the scale, computed on its own, is right.

Breaks: 05.restoring_scale.variance
"""
def restoring_scale(d, sigma_q, sigma_k):
    if d < 1 or sigma_q <= 0 or sigma_k <= 0:
        raise ValueError("d >= 1 and positive standard deviations")
    return float(d * sigma_q * sigma_k), 1.0 / (sigma_q * sigma_k * math.sqrt(d))
