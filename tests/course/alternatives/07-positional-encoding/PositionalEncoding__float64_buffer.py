"""PositionalEncoding keeping a float64 buffer and casting the slice to x's dtype in forward (issue 12's example)."""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(p=dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model).double())

    def forward(self, x):
        if x.size(1) > len(self.pe):
            raise ValueError(f"{x.size(1)} tokens but max_len is {len(self.pe)}")
        return self.drop(x + self.pe[: x.size(1)].to(x.dtype))
