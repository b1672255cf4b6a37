"""restoring_scale: keeps the Transformer's 1/sqrt(d), ignoring the standard deviations.

Breaks: 05.restoring_scale.scale
"""
def restoring_scale(d, sigma_q, sigma_k):
    if d < 1 or sigma_q <= 0 or sigma_k <= 0:
        raise ValueError("d >= 1 and positive standard deviations")
    return float(d * sigma_q**2 * sigma_k**2), 1.0 / math.sqrt(d)
