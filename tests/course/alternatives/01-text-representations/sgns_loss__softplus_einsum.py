"""sgns_loss: einsum for the scores and softplus, using -log sigmoid(x) = softplus(-x)."""
def sgns_loss(centre, context, negatives):
    positive = torch.einsum("...d,...d->...", context, centre)
    negative = torch.einsum("...kd,...d->...k", negatives, centre)
    return F.softplus(-positive) + F.softplus(negative).sum(-1)
