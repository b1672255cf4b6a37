"""PositionalEncoding: accepts dropout and builds nn.Dropout, but forward never applies it (training mode drops nothing).

Breaks: 09.PositionalEncoding.dropout
"""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model))

    def forward(self, x):
        n = x.shape[-2]
        if n > self.pe.shape[0]:
            raise ValueError(f"sequence length {n} exceeds max_len={self.pe.shape[0]}")
        return x + self.pe[:n]
