"""rnn_forward: multiplies by W_hh^T (the nn.RNN storage convention) instead of W_hh.

Breaks: 08.rnn_forward.values
"""
def rnn_forward(x, W_xh, W_hh, b_h, h0=None):
    B, N, _ = x.shape
    h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0
    states = []
    for t in range(N):
        h = torch.tanh(x[:, t] @ W_xh + h @ W_hh.T + b_h)
        states.append(h)
    return torch.stack(states, dim=1), h
