"""rnn_forward: creates h0 with torch.zeros (float32), so float64 inputs come back float32.

Breaks: 08.rnn_forward.dtype
"""
def rnn_forward(x, W_xh, W_hh, b_h, h0=None):
    B, N, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], device=x.device) if h0 is None else h0.float()
    states = []
    for t in range(N):
        h = torch.tanh(x[:, t].float() @ W_xh.float() + h @ W_hh.float() + b_h.float())
        states.append(h)
    return torch.stack(states, dim=1), h
