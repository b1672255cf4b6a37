"""attend: replaces -inf scores by 0 "to avoid NaN", so a masked key still gets weight e^0 / sum.

Breaks: 04.attend.masked
"""
def attend(scores, V):
    weights = torch.softmax(torch.nan_to_num(scores, neginf=0.0), dim=-1)
    return weights @ V, weights
