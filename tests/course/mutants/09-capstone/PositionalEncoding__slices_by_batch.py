"""PositionalEncoding: slices pe by x.shape[0] (the batch size) instead of the sequence length.

Breaks: 09.PositionalEncoding.forward
"""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model))

    def forward(self, x):
        if x.shape[1] > self.pe.shape[0]:
            raise ValueError("sequence longer than max_len")
        return self.dropout(x + self.pe[: x.shape[0]].unsqueeze(1))
