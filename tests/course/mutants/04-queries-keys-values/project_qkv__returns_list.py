"""project_qkv: returns a list instead of the tuple the contract names.

Breaks: 04.project_qkv.tuple
"""
def project_qkv(X, W_q, W_k, W_v):
    return [X @ W_q, X @ W_k, X @ W_v]
