"""PositionalEncoding: registers the right buffer, then leaves it aside and builds the table again in every forward,
on the CPU (no device=): right on the CPU; on a GPU x + table mixes devices and raises.

Breaks: 07.PositionalEncoding.forward
"""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model))

    def forward(self, x):
        N, d = x.shape[1], x.shape[2]
        if N > self.pe.shape[0]:
            raise ValueError("sequence longer than max_len")
        position = torch.arange(N, dtype=torch.float64)[:, None]
        angle = position * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        table = torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(N, d)
        return self.dropout(x + table.to(x.dtype))
