"""conv1d_via_attention: does the forbidden job with F.conv2d and a height-1 kernel (a conv2d of height 1 is a
conv1d), so no conv1d is ever named.

Breaks: 08.conv1d_via_attention.values, 08.conv1d_via_attention.dtype, 08.conv1d_via_attention.device, 08.conv1d_via_attention.unchanged
"""
def conv1d_via_attention(x, weight):
    K = weight.shape[-1]
    if K % 2 == 0 or weight.shape[1] != x.shape[-1]:
        raise ValueError("odd kernel and matching channels expected")
    y = F.conv2d(x.transpose(1, 2).unsqueeze(2), weight.unsqueeze(2), padding=(0, K // 2))  # (B, C_out, 1, N)
    return y.squeeze(2).transpose(1, 2)
