"""attend: subtracts each row's maximum in place for stability (scores -= ...), changing the caller's scores.

Breaks: 04.attend.unchanged
"""
def attend(scores, V):
    scores -= scores.amax(dim=-1, keepdim=True)
    e = torch.exp(scores)
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ V, weights
