"""restoring_scale: no argument check (sigma = 0 divides by zero, a negative sigma is accepted).

Breaks: 05.restoring_scale.errors
"""
def restoring_scale(d, sigma_q, sigma_k):
    variance = float(d * sigma_q**2 * sigma_k**2)
    return variance, 1.0 / (abs(sigma_q * sigma_k) * math.sqrt(d))
