"""additive_scores: uses ReLU instead of tanh."""
def additive_scores(Q, K, w):
    return torch.relu(Q.unsqueeze(-2) + K.unsqueeze(-3)) @ w
