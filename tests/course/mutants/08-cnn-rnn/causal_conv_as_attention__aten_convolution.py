"""causal_conv_as_attention: builds the matrix by running the identity through ATen's convolution operator
itself (torch.ops.aten.convolution, 2-D with a height-1 kernel), a routine of another name doing the forbidden job.

Breaks: 08.causal_conv_as_attention.values, 08.causal_conv_as_attention.dilation, 08.causal_conv_as_attention.dtype, 08.causal_conv_as_attention.device, 08.causal_conv_as_attention.unchanged
"""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.numel() < 1:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be at least 1")
    K = kernel.numel()
    eye = torch.eye(n, dtype=kernel.dtype, device=kernel.device).view(n, 1, 1, n)  # signal j = e_j
    padded = torch.cat([torch.zeros(n, 1, 1, (K - 1) * dilation, dtype=kernel.dtype, device=kernel.device), eye], dim=-1)
    cols = torch.ops.aten.convolution(padded, kernel.view(1, 1, 1, K), None, [1, 1], [0, 0], [1, dilation], False, [0, 0], 1)
    return cols.view(n, n).T.contiguous()  # row j of cols is A e_j
