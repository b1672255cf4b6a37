"""causal_conv_as_attention: loops over rows and taps, writing into a matrix made with kernel.new_zeros."""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not torch.is_tensor(kernel) or kernel.ndim != 1 or len(kernel) == 0:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    if n < 1:
        raise ValueError("n must be >= 1")
    if dilation < 1:
        raise ValueError("dilation must be >= 1")
    K = len(kernel)
    A = kernel.new_zeros(n, n)
    for i in range(n):
        for k in range(K):
            j = i - (K - 1 - k) * dilation
            if j >= 0:
                A[i, j] = kernel[k]
    return A
