"""causal_conv_as_attention: puts kernel[k] at distance k back (A[i, i - k d] = kernel[k]), a true convolution
instead of PyTorch's cross-correlation, so the newest token gets kernel[0].

Breaks: 08.causal_conv_as_attention.values
"""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.numel() == 0:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be >= 1")
    A = kernel.new_zeros(n, n)
    for i in range(n):
        for k in range(kernel.shape[0]):
            if i - k * dilation >= 0:
                A[i, i - k * dilation] = kernel[k]
    return A
