"""PositionalEncoding: no ValueError beyond max_len (a broadcasting RuntimeError instead).

Breaks: 09.PositionalEncoding.errors
"""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model))

    def forward(self, x):
        return self.dropout(x + self.pe[: x.shape[-2]])
