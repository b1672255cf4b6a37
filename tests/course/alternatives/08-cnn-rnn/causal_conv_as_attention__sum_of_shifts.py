"""causal_conv_as_attention: a weighted sum of K shift matrices (one per tap, on a lower diagonal), like the
chapter's convolution heads, built with torch.diag on the kernel's device."""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.shape[0] < 1:
        raise ValueError("kernel must be a 1-D tensor with at least one tap")
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be positive")
    K = kernel.shape[0]
    A = torch.zeros(n, n, dtype=kernel.dtype, device=kernel.device)
    for k in range(K):
        back = (K - 1 - k) * dilation                        # this tap looks `back` tokens into the past
        if back < n:
            shift = torch.diag(torch.ones(n - back, dtype=kernel.dtype, device=kernel.device), diagonal=-back)
            A = A + kernel[k] * shift
    return A
