"""sgns_loss: a stable -log sigmoid derived by hand, max(-x, 0) + log1p(exp(-|x|)), scores by matmul."""
def sgns_loss(centre, context, negatives):
    def nls(x):
        return torch.clamp(-x, min=0) + torch.log1p(torch.exp(-x.abs()))

    positive = (centre.unsqueeze(-2) @ context.unsqueeze(-1)).squeeze(-1).squeeze(-1)
    negative = (negatives @ centre.unsqueeze(-1)).squeeze(-1)
    return nls(positive) + nls(-negative).sum(-1)
