"""self_attention: converts X to float32 first, so a float64 layer returns float32.

Breaks: 04.self_attention.dtype_device
"""
def self_attention(X, W_q, W_k, W_v):
    X = X.to(torch.float32)
    Q, K, V = X @ W_q.float(), X @ W_k.float(), X @ W_v.float()
    return torch.softmax(Q @ K.transpose(-2, -1), dim=-1) @ V
