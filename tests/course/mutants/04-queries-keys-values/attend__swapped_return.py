"""attend: returns (weights, output) instead of (output, weights)."""
def attend(scores, V):
    weights = torch.softmax(scores, dim=-1)
    return weights, weights @ V
