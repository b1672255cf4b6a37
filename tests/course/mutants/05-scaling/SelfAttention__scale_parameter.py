"""SelfAttention: stores the scale 1/sqrt(dim_k) as an nn.Parameter, an extra (trainable) parameter the contract rules out.

Breaks: 05.SelfAttention.no_extra_parameters
"""
class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)
        self.scale = nn.Parameter(torch.tensor(dim_k ** -0.5))

    def forward(self, x, mask=None):
        Q, K, V = self.q(x), self.k(x), self.v(x)
        scores = (Q @ K.transpose(-2, -1)) * self.scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)
        return weights @ V
