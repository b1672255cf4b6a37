"""PositionalEncoding with an unsqueezed slice, F.dropout and self.training, and persistent=True spelled out."""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.p = dropout
        self.dropout = nn.Dropout(dropout)
        table = torch.zeros(max_len, d_model)
        table.copy_(sinusoidal_positional_encoding(max_len, d_model))
        self.register_buffer("pe", table, persistent=True)

    def forward(self, x):
        B, N, D = x.shape
        if N > self.pe.shape[0]:
            raise ValueError("sequence longer than max_len")
        return F.dropout(x + self.pe[:N].unsqueeze(0), p=self.p, training=self.training)
