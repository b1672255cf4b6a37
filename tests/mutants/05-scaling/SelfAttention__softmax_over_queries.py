"""SelfAttention: normalises each column (softmax over dim=1) instead of each row."""


class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)
        self.dim_k, self.dim_v = dim_k, dim_v

    def forward(self, x, mask=None):
        Q, K, V = self.q(x), self.k(x), self.v(x)
        scores = Q @ K.transpose(1, 2) / math.sqrt(self.dim_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, dim=1), nan=0.0) @ V
