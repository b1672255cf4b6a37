"""self_attention: makes an unbatched X batched with the in-place unsqueeze_ (and squeezes only the output),
so the caller's X gains a leading dimension.

Breaks: 04.self_attention.unchanged
"""
def self_attention(X, W_q, W_k, W_v):
    unbatched = X.dim() == 2
    if unbatched:
        X.unsqueeze_(0)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    out = torch.softmax(Q @ K.transpose(-2, -1), dim=-1) @ V
    return out.squeeze(0) if unbatched else out
