"""attend: multiplies the transposed weights with V (mixes over queries)."""
def attend(scores, V):
    weights = torch.softmax(scores, dim=-1)
    return weights.transpose(-2, -1) @ V, weights
