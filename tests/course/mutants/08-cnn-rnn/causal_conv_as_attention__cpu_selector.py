"""causal_conv_as_attention: writes A as a linear map of the kernel, A = (selector @ kernel[:, None]).view(n, n), with a 0/1
selector built without device=kernel.device, so A lands on the CPU for a kernel on another device.

Breaks: 08.causal_conv_as_attention.device
"""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.numel() == 0:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be >= 1")
    K = kernel.shape[0]
    selector = torch.zeros(n, n, K, dtype=kernel.dtype)       # selector[i, j, k] = 1 where kernel[k] sits at A[i, j]
    for i in range(n):
        for k in range(K):
            j = i - (K - 1 - k) * dilation
            if j >= 0:
                selector[i, j, k] = 1.0
    return (selector.view(n * n, K) @ kernel.view(K, 1)).view(n, n)
