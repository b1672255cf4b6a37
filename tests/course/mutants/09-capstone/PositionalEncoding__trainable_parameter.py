"""PositionalEncoding: wraps pe in nn.Parameter, so training would change the encoding.

Breaks: 09.PositionalEncoding.buffer
"""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.pe = nn.Parameter(sinusoidal_positional_encoding(max_len, d_model))

    def forward(self, x):
        n = x.shape[-2]
        if n > self.pe.shape[0]:
            raise ValueError("sequence longer than max_len")
        return self.dropout(x + self.pe[:n])
