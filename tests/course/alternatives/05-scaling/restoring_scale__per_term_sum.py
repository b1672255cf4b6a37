"""restoring_scale summing the variance of each of the d terms (a loop), then scale = variance ** -0.5."""
def restoring_scale(d, sigma_q, sigma_k):
    if d < 1:
        raise ValueError("d < 1")
    if min(sigma_q, sigma_k) <= 0:
        raise ValueError("a standard deviation is not positive")
    term = float(sigma_q) ** 2 * float(sigma_k) ** 2  # Var(q_i k_i) = E[q_i^2] E[k_i^2]
    variance = 0.0
    for _ in range(int(d)):
        variance += term
    return variance, variance ** -0.5
