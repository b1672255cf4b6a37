"""MultiHeadSelfAttention: no ValueError when d_model is not divisible by num_heads (d_head is rounded down)."""


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        q = self.q_proj(x).view(B, N, self.num_heads, -1).transpose(1, 2)
        k = self.k_proj(x).view(B, N, self.num_heads, -1).transpose(1, 2)
        v = self.v_proj(x).view(B, N, self.num_heads, -1).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        output = self.out_proj(weights.transpose(1, 2).reshape(B, N, D))
        return (output, weights) if return_weights else output
