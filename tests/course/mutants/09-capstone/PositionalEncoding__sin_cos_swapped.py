"""PositionalEncoding: cosines in the even columns and sines in the odd ones."""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        pe = sinusoidal_positional_encoding(max_len, d_model)
        self.register_buffer("pe", torch.stack([pe[:, 1::2], pe[:, 0::2]], dim=-1).flatten(1))

    def forward(self, x):
        n = x.shape[-2]
        if n > self.pe.shape[0]:
            raise ValueError("sequence longer than max_len")
        return self.dropout(x + self.pe[:n])
