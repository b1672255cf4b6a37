"""conv1d_via_attention: the shift matrices moved with .to(x.dtype) only (they stay on the CPU) and applied to the
whole batch by a broadcast matmul: right on the CPU; on a GPU the CPU matrix meets a CUDA x and raises.

Breaks: 08.conv1d_via_attention.device
"""
def conv1d_via_attention(x, weight):
    B, N, C_in = x.shape
    C_out, C_w, K = weight.shape
    if K % 2 == 0 or C_w != C_in:
        raise ValueError("odd kernel and matching channels expected")
    out = 0
    for k in range(K):
        S = shift_attention_matrix(N, k - K // 2).to(x.dtype)  # (N, N) on the CPU
        out = out + S @ x @ weight[:, :, k].T  # (N, N) @ (B, N, C_in): broadcast over the batch
    return out
