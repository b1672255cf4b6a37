"""rnn_forward: starts from torch.zeros(B, H, dtype=x.dtype), without device=, so the zero state sits on the CPU
whatever the device of x (on a GPU the first step mixes devices).

Breaks: 08.rnn_forward.device
"""
def rnn_forward(x, W_xh, W_hh, b_h, h0=None):
    B, N, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], dtype=x.dtype) if h0 is None else h0
    states = []
    for t in range(N):
        h = torch.tanh(x[:, t] @ W_xh + h @ W_hh + b_h)
        states.append(h)
    return torch.stack(states, dim=1), h
