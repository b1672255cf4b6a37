"""project_qkv: torch.mm, which only takes 2-d matrices (no batches)."""
def project_qkv(X, W_q, W_k, W_v):
    return torch.mm(X, W_q), torch.mm(X, W_k), torch.mm(X, W_v)
