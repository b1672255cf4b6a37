"""causal_conv_as_attention: reverses the kernel in place (kernel[:] = kernel.flip(0)) to index it by distance,
so the caller's kernel comes back reversed.

Breaks: 08.causal_conv_as_attention.unchanged
"""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.numel() == 0:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be >= 1")
    kernel[:] = kernel.flip(0)                                # kernel[m] is now the weight m steps back
    A = kernel.new_zeros(n, n)
    for i in range(n):
        for m in range(kernel.shape[0]):
            if i - m * dilation >= 0:
                A[i, i - m * dilation] = kernel[m]
    return A
