"""conv1d_via_attention: puts positions last with the in-place x.transpose_(1, 2), like F.conv1d's layout,
which changes the caller's x to shape (B, C_in, N).

Breaks: 08.conv1d_via_attention.unchanged
"""
def conv1d_via_attention(x, weight):
    B, N, C_in = x.shape
    C_out, C_w, K = weight.shape
    if K % 2 == 0 or C_w != C_in:
        raise ValueError("odd kernel and matching channels expected")
    x = x.transpose_(1, 2)                                    # (B, C_in, N)
    y = x.new_zeros(B, C_out, N)
    for k in range(K):
        S = shift_attention_matrix(N, k - K // 2).to(x)       # (N, N)
        y = y + weight[:, :, k] @ (x @ S.T)                   # (C_out, C_in) @ (B, C_in, N)
    return y.transpose(1, 2)
