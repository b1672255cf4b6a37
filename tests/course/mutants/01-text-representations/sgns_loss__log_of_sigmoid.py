"""sgns_loss: torch.log(torch.sigmoid(x)), which is -inf in float32 once sigmoid underflows (x below about -104).

Breaks: 01.sgns_loss.stable
"""
def sgns_loss(centre, context, negatives):
    positive = (centre * context).sum(-1)
    negative = (negatives * centre.unsqueeze(-2)).sum(-1)
    return -torch.log(torch.sigmoid(positive)) - torch.log(torch.sigmoid(-negative)).sum(-1)
