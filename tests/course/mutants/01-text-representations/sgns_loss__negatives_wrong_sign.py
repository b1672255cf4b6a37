"""sgns_loss: uses log sigmoid(+u_k . v_c) for the negatives (they should score low, so the sign is -).

Breaks: 01.sgns_loss.values
"""
def sgns_loss(centre, context, negatives):
    positive = (centre * context).sum(-1)
    negative = (negatives * centre.unsqueeze(-2)).sum(-1)
    return -F.logsigmoid(positive) - F.logsigmoid(negative).sum(-1)
