"""attend: computes the softmax in float32 (dtype=torch.float32), so float64 inputs give float32 results.

Breaks: 04.attend.dtype_device
"""
def attend(scores, V):
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32)
    return weights @ V.float(), weights
