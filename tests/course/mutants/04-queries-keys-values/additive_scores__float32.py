"""additive_scores: builds the pairs in float32 (torch.zeros without a dtype), so float64 inputs give float32.

Breaks: 04.additive_scores.dtype_device
"""
def additive_scores(Q, K, w):
    pairs = torch.zeros(*Q.shape[:-1], K.shape[-2], Q.shape[-1], device=Q.device)
    pairs += Q.unsqueeze(-2)
    pairs += K.unsqueeze(-3)
    return torch.tanh(pairs) @ w.float()
