"""PositionalEncoding whose table is filled column pair by column pair into torch.zeros, registered with an
explicit persistent=True, and sliced with narrow."""
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        table = torch.zeros(max_len, d_model)
        p = torch.arange(max_len, dtype=torch.float64)
        for i in range(0, d_model, 2):
            angle = p / 10000 ** (i / d_model)
            table[:, i], table[:, i + 1] = torch.sin(angle).float(), torch.cos(angle).float()
        self.register_buffer("pe", table, persistent=True)
        self.drop = nn.Dropout(p=dropout)

    def forward(self, x):
        n = x.size(1)
        if n > self.pe.size(0):
            raise ValueError(f"{n} tokens but max_len is {self.pe.size(0)}")
        return self.drop(x + self.pe.narrow(0, 0, n).to(x.dtype))
