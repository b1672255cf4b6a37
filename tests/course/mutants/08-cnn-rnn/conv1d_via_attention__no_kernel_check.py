"""conv1d_via_attention: checks the channels but not the kernel size, so an even K gives a silently shifted result.

Breaks: 08.conv1d_via_attention.even_kernel
"""
def conv1d_via_attention(x, weight):
    B, N, C_in = x.shape
    C_out, C_w, K = weight.shape
    if C_w != C_in:
        raise ValueError("weight's C_in must match x's channels")
    y = x.new_zeros(B, N, C_out)
    for k in range(K):
        y = y + shift_attention_matrix(N, k - K // 2).to(x) @ x @ weight[:, :, k].T
    return y
