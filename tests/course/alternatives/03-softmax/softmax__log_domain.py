"""softmax in the log domain: x - logsumexp(x), with logsumexp written out (max + log sum exp), then exp.
"""
def softmax(x, dim=-1):
    m = x.amax(dim=dim, keepdim=True)
    dead = torch.isneginf(m)
    m = torch.where(dead, torch.zeros_like(m), m)
    log_total = m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))
    out = torch.exp(x - log_total)
    return torch.where(dead, torch.zeros_like(out), out)
