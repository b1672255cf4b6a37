"""additive_scores: tanh(q_i) + tanh(k_j) instead of tanh(q_i + k_j)."""
def additive_scores(Q, K, w):
    return (torch.tanh(Q).unsqueeze(-2) + torch.tanh(K).unsqueeze(-3)) @ w
