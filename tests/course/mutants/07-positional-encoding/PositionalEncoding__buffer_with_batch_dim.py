"""PositionalEncoding: stores pe with a leading batch dimension, shape (1, max_len, d_model), as many tutorials do.

The forward pass is right (x + pe[:, :N]), but the buffer does not have the stated shape.
Breaks: 07.PositionalEncoding.buffer_values
"""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model).unsqueeze(0))

    def forward(self, x):
        n = x.shape[-2]
        if n > self.pe.shape[1]:
            raise ValueError("sequence longer than max_len")
        return self.dropout(x + self.pe[:, :n])
