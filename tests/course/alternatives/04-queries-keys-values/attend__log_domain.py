"""attend with weights = exp(scores - logsumexp(scores))."""
def attend(scores, V):
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return torch.matmul(weights, V), weights
