"""causal_conv_as_attention: reads A off F.conv1d applied to the unit vectors, which the exercise forbids."""
def causal_conv_as_attention(kernel, n, dilation=1):
    if not isinstance(kernel, torch.Tensor) or kernel.dim() != 1 or kernel.numel() == 0:
        raise ValueError("kernel must be a non-empty 1-D tensor")
    if n < 1 or dilation < 1:
        raise ValueError("n and dilation must be >= 1")
    K = kernel.shape[0]
    eye = torch.eye(n, dtype=kernel.dtype, device=kernel.device).unsqueeze(1)
    return F.conv1d(F.pad(eye, ((K - 1) * dilation, 0)), kernel.view(1, 1, K), dilation=dilation)[:, 0].T
