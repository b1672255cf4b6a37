"""attend: returns the raw scores as the weights."""
def attend(scores, V):
    return torch.softmax(scores, dim=-1) @ V, scores
