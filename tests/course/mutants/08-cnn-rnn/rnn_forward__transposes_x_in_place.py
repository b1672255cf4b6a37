"""rnn_forward: loops over time with x.transpose_(0, 1), which turns the caller's x into (N, B, D).

Breaks: 08.rnn_forward.unchanged
"""
def rnn_forward(x, W_xh, W_hh, b_h, h0=None):
    B, N, _ = x.shape
    h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0
    states = []
    for x_t in x.transpose_(0, 1):                            # (B, D) per step
        h = torch.tanh(x_t @ W_xh + h @ W_hh + b_h)
        states.append(h)
    return torch.stack(states, dim=1), h
