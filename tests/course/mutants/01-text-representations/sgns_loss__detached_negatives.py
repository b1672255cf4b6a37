"""sgns_loss: detaches the negative scores, so no gradient reaches negatives (or centre through them).

Breaks: 01.sgns_loss.gradients
"""
def sgns_loss(centre, context, negatives):
    positive = (centre * context).sum(-1)
    negative = (negatives * centre.unsqueeze(-2)).sum(-1).detach()
    return -F.logsigmoid(positive) - F.logsigmoid(-negative).sum(-1)
