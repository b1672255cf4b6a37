"""sgns_loss: averages the K negative terms instead of summing them.

Breaks: 01.sgns_loss.values
"""
def sgns_loss(centre, context, negatives):
    positive = (centre * context).sum(-1)
    negative = (negatives * centre.unsqueeze(-2)).sum(-1)
    return -F.logsigmoid(positive) - F.logsigmoid(-negative).mean(-1)
