"""project_qkv: returns (Q, V, K) instead of (Q, K, V).

Breaks: 04.project_qkv.values
"""
def project_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_v, X @ W_k
