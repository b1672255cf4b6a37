"""project_qkv: stores the weights like nn.Linear by transposing them in place (W.t_()), then multiplies by W.T;
the values are right, but the caller's W_q, W_k, W_v are left transposed.

Breaks: 04.project_qkv.unchanged
"""
def project_qkv(X, W_q, W_k, W_v):
    for W in (W_q, W_k, W_v):
        W.t_()
    return X @ W_q.T, X @ W_k.T, X @ W_v.T
