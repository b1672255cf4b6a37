"""project_qkv: multiplies by W.T, as if the weights were stored (d_k, d_in) like nn.Linear."""
def project_qkv(X, W_q, W_k, W_v):
    return X @ W_q.T, X @ W_k.T, X @ W_v.T
