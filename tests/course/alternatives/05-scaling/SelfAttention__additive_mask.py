"""SelfAttention with an additive float mask (0 where allowed, -inf where masked) and NaN rows replaced by 0."""
class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(input_dim, dim_k), nn.Linear(input_dim, dim_k), nn.Linear(input_dim, dim_v)

    def forward(self, x, mask=None):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1)) if mask is None else q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores + torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device).masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = torch.where(torch.isnan(weights), torch.zeros_like(weights), weights)
        return weights @ v
