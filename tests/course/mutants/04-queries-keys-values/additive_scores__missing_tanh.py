"""additive_scores: forgets the tanh, w . (q_i + k_j)."""
def additive_scores(Q, K, w):
    return (Q.unsqueeze(-2) + K.unsqueeze(-3)) @ w
