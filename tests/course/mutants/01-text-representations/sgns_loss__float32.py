"""sgns_loss: casts the inputs to float32 first, so float64 inputs give a float32 loss.

Breaks: 01.sgns_loss.dtype
"""
def sgns_loss(centre, context, negatives):
    centre, context, negatives = centre.float(), context.float(), negatives.float()
    positive = (centre * context).sum(-1)
    negative = (negatives * centre.unsqueeze(-2)).sum(-1)
    return -F.logsigmoid(positive) - F.logsigmoid(-negative).sum(-1)
