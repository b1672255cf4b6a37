"""sgns_loss: returns the mean over the batch (a scalar) instead of one loss per example.

Breaks: 01.sgns_loss.values
"""
def sgns_loss(centre, context, negatives):
    positive = (centre * context).sum(-1)
    negative = (negatives * centre.unsqueeze(-2)).sum(-1)
    return (-F.logsigmoid(positive) - F.logsigmoid(-negative).sum(-1)).mean()
