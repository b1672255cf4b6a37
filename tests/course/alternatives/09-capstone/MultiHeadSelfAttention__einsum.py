"""MultiHeadSelfAttention: heads as an extra einsum index, the mask applied with torch.where."""
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("num_heads must divide d_model")
        self.h = num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        q = self.q_proj(x).reshape(B, N, self.h, -1)
        k = self.k_proj(x).reshape(B, N, self.h, -1)
        v = self.v_proj(x).reshape(B, N, self.h, -1)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / (D // self.h) ** 0.5
        if mask is not None:
            scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device))
        weights = scores.softmax(dim=-1)
        out = self.out_proj(torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, N, D))
        return (out, weights) if return_weights else out
