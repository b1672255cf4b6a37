"""self_attention written in one expression, without the helper functions."""
def self_attention(X, W_q, W_k, W_v):
    return torch.softmax((X @ W_q) @ (X @ W_k).mT, dim=-1) @ (X @ W_v)
