"""PositionalEncoding: frequencies as exp(-log(10000) * 2i / d) (the Annotated Transformer's form), sin and cos interleaved with stack/flatten."""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        if d_model % 2:
            raise ValueError("d_model must be even")
        position = torch.arange(max_len, dtype=torch.float64)[:, None]
        frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
        angle = position * frequency                                              # (max_len, d/2)
        self.register_buffer("pe", torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1).float())
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError(f"{x.size(1)} positions, max_len is {self.pe.size(0)}")
        return self.dropout(x + self.pe[: x.size(1)].to(x.dtype))
