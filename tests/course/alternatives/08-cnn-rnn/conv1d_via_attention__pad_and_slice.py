"""conv1d_via_attention: zero-pad the sequence and take K shifted slices (no shift matrices), then one einsum."""
def conv1d_via_attention(x, weight):
    B, N, C_in = x.shape
    C_out, C_w, K = weight.shape
    if K % 2 == 0:
        raise ValueError("even kernel")
    if C_w != C_in:
        raise ValueError("channel mismatch")
    padded = F.pad(x, (0, 0, K // 2, K // 2))                 # (B, N + K - 1, C_in)
    windows = torch.stack([padded[:, k:k + N] for k in range(K)], dim=-1)   # (B, N, C_in, K)
    return torch.einsum("bnck,ock->bno", windows, weight)
