"""sgns_loss: negates the caller's negatives in place (negatives.neg_()) to reuse logsigmoid.

Breaks: 01.sgns_loss.unchanged
"""
def sgns_loss(centre, context, negatives):
    positive = (centre * context).sum(-1)
    flipped = (negatives.neg_() * centre.unsqueeze(-2)).sum(-1)
    return -F.logsigmoid(positive) - F.logsigmoid(flipped).sum(-1)
