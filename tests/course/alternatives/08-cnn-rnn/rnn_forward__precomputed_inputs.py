"""rnn_forward: projects all inputs at once (x W_xh + b_h), then only the recurrent part runs in the loop."""
def rnn_forward(x, W_xh, W_hh, b_h, h0=None):
    inputs = x @ W_xh + b_h                                   # (B, N, H), parallel over t
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype, device=x.device) if h0 is None else h0
    states = []
    for t in range(x.shape[1]):
        h = torch.tanh(inputs[:, t] + h @ W_hh)
        states.append(h)
    return torch.stack(states, 1), states[-1]
