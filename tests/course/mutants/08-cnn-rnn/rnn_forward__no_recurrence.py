"""rnn_forward: h_t = tanh(x_t W_xh + h_0 W_hh + b_h), always using the initial state instead of h_(t-1)."""
def rnn_forward(x, W_xh, W_hh, b_h, h0=None):
    B, N, _ = x.shape
    h_init = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0
    states = torch.tanh(x @ W_xh + (h_init @ W_hh).unsqueeze(1) + b_h)
    return states, states[:, -1]
