"""restoring_scale through the standard deviation of the score: std = sqrt(d) sigma_q sigma_k, scale = 1 / std."""
def restoring_scale(d, sigma_q, sigma_k):
    if not d >= 1 or not sigma_q > 0 or not sigma_k > 0:
        raise ValueError("d >= 1, sigma_q > 0 and sigma_k > 0 are required")
    std = math.sqrt(d) * sigma_q * sigma_k
    return std * std, 1 / std
