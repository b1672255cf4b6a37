"""SelfAttention: inlines the attention and zeroes fully masked rows by boolean indexing with ~mask.any(-1),
which only works for a (B, N, N) mask (a broadcast (N, N) or (B, 1, N) mask with a dead row raises).

Breaks: 05.SelfAttention.mask
"""
class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)

    def forward(self, x, mask=None):
        Q, K, V = self.q(x), self.k(x), self.v(x)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            dead = ~mask.any(dim=-1)
            if dead.any():
                weights[dead] = 0.0
        return weights @ V
