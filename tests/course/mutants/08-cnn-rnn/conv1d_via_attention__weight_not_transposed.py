"""conv1d_via_attention: multiplies by weight[:, :, k] reshaped to (C_in, C_out) instead of its transpose.

Breaks: 08.conv1d_via_attention.values
"""
def conv1d_via_attention(x, weight):
    B, N, C_in = x.shape
    C_out, C_w, K = weight.shape
    if K % 2 == 0 or C_w != C_in:
        raise ValueError("odd kernel and matching channels expected")
    y = x.new_zeros(B, N, C_out)
    for k in range(K):
        y = y + shift_attention_matrix(N, k - K // 2).to(x) @ x @ weight[:, :, k].reshape(C_in, C_out)
    return y
