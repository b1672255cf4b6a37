"""conv1d_via_attention: uses offset K//2 - k, a true (flipped) convolution, not PyTorch's cross-correlation.

Breaks: 08.conv1d_via_attention.values
"""
def conv1d_via_attention(x, weight):
    B, N, C_in = x.shape
    C_out, C_w, K = weight.shape
    if K % 2 == 0 or C_w != C_in:
        raise ValueError("odd kernel and matching channels expected")
    y = x.new_zeros(B, N, C_out)
    for k in range(K):
        y = y + shift_attention_matrix(N, K // 2 - k).to(x) @ x @ weight[:, :, k].T
    return y
