"""sgns_loss: clamps the scores to [-10, 10] "to avoid overflow", which changes every loss whose scores reach beyond that.

Breaks: 01.sgns_loss.values
"""
def sgns_loss(centre, context, negatives):
    positive = (centre * context).sum(-1).clamp(-10, 10)
    negative = (negatives * centre.unsqueeze(-2)).sum(-1).clamp(-10, 10)
    return -F.logsigmoid(positive) - F.logsigmoid(-negative).sum(-1)
