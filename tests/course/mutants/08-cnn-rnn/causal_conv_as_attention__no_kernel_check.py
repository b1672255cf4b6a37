"""causal_conv_as_attention: validates n and dilation but not the kernel's shape, so a 2-D, 0-D or empty kernel
does not raise ValueError.

Breaks: 08.causal_conv_as_attention.bad_kernel
"""
def causal_conv_as_attention(kernel, n, dilation=1):
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be >= 1")
    kernel = kernel.reshape(-1)
    K = kernel.shape[0]
    A = kernel.new_zeros(n, n)
    for i in range(n):
        for k in range(K):
            j = i - (K - 1 - k) * dilation
            if j >= 0:
                A[i, j] = kernel[k]
    return A
