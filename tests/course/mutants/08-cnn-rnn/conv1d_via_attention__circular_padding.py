"""conv1d_via_attention: shifts with torch.roll, so the sequence wraps around instead of zero padding.

Breaks: 08.conv1d_via_attention.values
"""
def conv1d_via_attention(x, weight):
    B, N, C_in = x.shape
    C_out, C_w, K = weight.shape
    if K % 2 == 0 or C_w != C_in:
        raise ValueError("odd kernel and matching channels expected")
    y = x.new_zeros(B, N, C_out)
    for k in range(K):
        y = y + torch.roll(x, shifts=K // 2 - k, dims=1) @ weight[:, :, k].T
    return y
