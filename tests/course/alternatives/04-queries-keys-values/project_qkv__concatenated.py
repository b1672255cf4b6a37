"""project_qkv with one matrix product against the concatenated weights, then split along the last dim."""
def project_qkv(X, W_q, W_k, W_v):
    d_k = W_q.shape[-1]
    QKV = torch.matmul(X, torch.cat([W_q, W_k, W_v], dim=-1))
    Q, K, V = torch.split(QKV, [d_k, d_k, W_v.shape[-1]], dim=-1)
    return Q, K, V
