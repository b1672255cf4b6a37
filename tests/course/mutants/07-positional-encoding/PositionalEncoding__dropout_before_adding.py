"""PositionalEncoding: applies dropout to x and then adds pe, instead of dropout(x + pe).

Breaks: 07.PositionalEncoding.dropout
"""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model))

    def forward(self, x):
        n = x.shape[-2]
        if n > self.pe.shape[0]:
            raise ValueError("sequence longer than max_len")
        return self.dropout(x) + self.pe[:n]
