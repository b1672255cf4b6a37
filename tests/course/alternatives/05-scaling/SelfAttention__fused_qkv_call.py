"""SelfAttention that calls the three layers in a loop and inlines the attention (no helper function)."""
class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)
        self.dim_k = dim_k

    def forward(self, x, mask=None):
        Q, K, V = (layer(x) for layer in (self.q, self.k, self.v))
        scores = Q @ K.mT / self.dim_k ** 0.5
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        weights = scores.softmax(dim=-1)
        if mask is not None:
            weights = torch.nan_to_num(weights, nan=0.0)
        return weights @ V
