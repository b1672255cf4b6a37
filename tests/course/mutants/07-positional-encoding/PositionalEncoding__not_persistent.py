"""PositionalEncoding: registers pe with persistent=False, so it is a buffer but is not in the state_dict
(not saved with the model, although the notebook says it is).

Breaks: 07.PositionalEncoding.buffer
"""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)

    def forward(self, x):
        n = x.shape[-2]
        if n > self.pe.shape[0]:
            raise ValueError("sequence longer than max_len")
        return self.dropout(x + self.pe[:n])
