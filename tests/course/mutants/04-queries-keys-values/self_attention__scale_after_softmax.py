"""self_attention: the source notes' bug, multiplies the weights by 1/sqrt(d_k) after the softmax.

Breaks: 04.self_attention.values
"""
def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = torch.softmax(Q @ K.transpose(-2, -1), dim=-1) / K.shape[-1] ** 0.5
    return weights @ V
