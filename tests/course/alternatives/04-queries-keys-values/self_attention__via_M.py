"""self_attention through M = W_q W_k^T: S = X M X^T, then the softmax over the keys (log-domain)."""
def self_attention(X, W_q, W_k, W_v):
    M = W_q @ W_k.T
    S = X @ M @ X.transpose(-2, -1)
    weights = torch.exp(torch.log_softmax(S, dim=-1))
    return weights @ (X @ W_v)
