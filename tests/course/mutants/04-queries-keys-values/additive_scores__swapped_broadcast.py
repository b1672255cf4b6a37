"""additive_scores: unsqueezes the wrong dims, giving one row per key (the transpose).

Breaks: 04.additive_scores.values
"""
def additive_scores(Q, K, w):
    return torch.tanh(Q.unsqueeze(-3) + K.unsqueeze(-2)) @ w
