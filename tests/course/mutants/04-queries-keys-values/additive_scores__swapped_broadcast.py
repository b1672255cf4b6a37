"""additive_scores: unsqueezes the wrong dims, giving one row per key (the transpose)."""
def additive_scores(Q, K, w):
    return torch.tanh(Q.unsqueeze(-3) + K.unsqueeze(-2)) @ w
