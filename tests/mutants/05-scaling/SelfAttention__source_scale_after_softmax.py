"""SelfAttention: the source material's class, scales the softmax output by 1/sqrt(dim_k) (rows sum to 1/sqrt(dim_k))."""


class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)
        self.dim_k, self.dim_v = dim_k, dim_v

    def forward(self, x, mask=None):
        Q, K, V = self.q(x), self.k(x), self.v(x)
        scores = torch.bmm(Q, K.permute(0, 2, 1))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        atten = torch.nan_to_num(nn.Softmax(dim=-1)(scores), nan=0.0) * (1 / math.sqrt(self.dim_k))
        return torch.bmm(atten, V)
