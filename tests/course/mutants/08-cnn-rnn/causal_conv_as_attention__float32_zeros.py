"""causal_conv_as_attention: starts from torch.zeros(n, n, device=kernel.device), float32 whatever the kernel's dtype.

Breaks: 08.causal_conv_as_attention.dtype
"""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.numel() == 0:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be >= 1")
    K = kernel.shape[0]
    A = torch.zeros(n, n, device=kernel.device)
    for i in range(n):
        for k in range(K):
            j = i - (K - 1 - k) * dilation
            if j >= 0:
                A[i, j] = kernel[k]
    return A
