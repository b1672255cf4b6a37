"""softmax: upcasts float16/bfloat16 to float32 for accuracy and forgets to cast the result back.

Breaks: 03.softmax.dtype
"""
def softmax(x, dim=-1):
    if x.dtype in (torch.float16, torch.bfloat16):
        x = x.float()
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    e = torch.exp(x - m)
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)
