"""additive_scores: applies tanh after the projection by w, tanh(w . (q_i + k_j)).

Breaks: 04.additive_scores.values
"""
def additive_scores(Q, K, w):
    return torch.tanh((Q.unsqueeze(-2) + K.unsqueeze(-3)) @ w)
