"""attend: writes the softmax as exp / sum exp without subtracting the max (NaN for large scores).

Breaks: 04.attend.stable
"""
def attend(scores, V):
    e = torch.exp(scores)
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ V, weights
