"""shift_attention_matrix: a window cut out of a wider identity matrix (no loops, no diag)."""
def shift_attention_matrix(n, offset):
    pad = abs(offset)
    wide = torch.eye(n + 2 * pad)                             # wide[r, c] = 1 iff r == c
    return wide[pad + offset:pad + offset + n, pad:pad + n].clone()   # S[i, j] = 1 iff i + offset == j
