"""additive_scores: uses the in-place unsqueeze_, so the caller's Q and K gain a dimension.

Breaks: 04.additive_scores.unchanged
"""
def additive_scores(Q, K, w):
    Q.unsqueeze_(-2)
    K.unsqueeze_(-3)
    return torch.tanh(Q + K) @ w
