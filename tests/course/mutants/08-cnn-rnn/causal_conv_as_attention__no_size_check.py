"""causal_conv_as_attention: validates the kernel but not n or dilation, so n = 0 returns an empty matrix and
dilation = 0 piles every tap on the diagonal.

Breaks: 08.causal_conv_as_attention.bad_sizes
"""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.numel() == 0:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    K = kernel.shape[0]
    A = kernel.new_zeros(n, n)
    for i in range(n):
        for k in range(K):
            j = i - (K - 1 - k) * dilation
            if 0 <= j < n:
                A[i, j] = A[i, j] + kernel[k]
    return A
