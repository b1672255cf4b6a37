"""causal_mask: accepts device but never uses it (the mask is always made on the CPU).

Breaks: 10.causal_mask.device
"""


def causal_mask(n, device=None):
    i = torch.arange(n)
    return i[None, :] <= i[:, None]
