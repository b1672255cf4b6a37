"""causal_conv_as_attention: fills the band above the diagonal (A[i, i + (K - 1 - k) d]), so each token
attends to the future instead of the past: the transpose of the causal matrix.

Breaks: 08.causal_conv_as_attention.values
"""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.numel() == 0:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be >= 1")
    K = kernel.shape[0]
    A = kernel.new_zeros(n, n)
    for i in range(n):
        for k in range(K):
            j = i + (K - 1 - k) * dilation
            if j < n:
                A[i, j] = kernel[k]
    return A
