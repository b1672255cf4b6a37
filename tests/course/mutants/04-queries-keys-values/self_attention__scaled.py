"""self_attention: divides the scores by sqrt(d_k) (chapter 5's layer, not this unscaled one).

Breaks: 04.self_attention.values
"""
def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return torch.softmax(Q @ K.transpose(-2, -1) / K.shape[-1] ** 0.5, dim=-1) @ V
