"""self_attention: scores K Q^T instead of Q K^T.

Breaks: 04.self_attention.values
"""
def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return torch.softmax(K @ Q.transpose(-2, -1), dim=-1) @ V
