"""sgns_loss: log1p(exp(-x)) as written, which overflows to inf for scores below about -88 in float32.

Breaks: 01.sgns_loss.stable
"""
def sgns_loss(centre, context, negatives):
    positive = (centre * context).sum(-1)
    negative = (negatives * centre.unsqueeze(-2)).sum(-1)
    return torch.log1p(torch.exp(-positive)) + torch.log1p(torch.exp(negative)).sum(-1)
