"""project_qkv: copy-paste slip, the keys use W_q.

Breaks: 04.project_qkv.values
"""
def project_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_q, X @ W_v
