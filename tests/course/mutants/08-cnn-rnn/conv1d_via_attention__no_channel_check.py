"""conv1d_via_attention: checks the kernel size but not the channels, so a mismatch raises a matmul RuntimeError.

Breaks: 08.conv1d_via_attention.channels
"""
def conv1d_via_attention(x, weight):
    B, N, C_in = x.shape
    C_out, C_w, K = weight.shape
    if K % 2 == 0:
        raise ValueError("the kernel size must be odd")
    y = x.new_zeros(B, N, C_out)
    for k in range(K):
        y = y + shift_attention_matrix(N, k - K // 2).to(x) @ x @ weight[:, :, k].T
    return y
