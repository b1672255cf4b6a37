"""project_qkv: casts X and the weights to float32 "to be safe", so float64 inputs come back as float32.

Breaks: 04.project_qkv.dtype_device
"""
def project_qkv(X, W_q, W_k, W_v):
    X = X.float()
    return X @ W_q.float(), X @ W_k.float(), X @ W_v.float()
