"""PositionalEncoding: the table filled entry by entry with Python's math module, then stored as a float32 buffer."""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        rows = []
        for p in range(max_len):
            row = []
            for i in range(0, d_model, 2):
                angle = p / 10000 ** (i / d_model)
                row += [math.sin(angle), math.cos(angle)]
            rows.append(row[:d_model])
        self.register_buffer("pe", torch.tensor(rows, dtype=torch.float32))
        self.p = dropout

    def forward(self, x):
        n = x.shape[1]
        if n > len(self.pe):
            raise ValueError("sequence longer than max_len")
        return F.dropout(x + self.pe[:n], self.p, self.training)
