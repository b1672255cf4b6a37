"""MultiHeadSelfAttention: computes the scores, the mask and the softmax under torch.no_grad() ("the weights are
only probabilities"), so q_proj and k_proj never get a gradient and the tagger cannot learn where to look.

Breaks: 09.MultiHeadSelfAttention.gradients
"""
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("d_model must be divisible by num_heads")
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        H, Dh = self.num_heads, D // self.num_heads
        q = self.q_proj(x).view(B, N, H, Dh).transpose(1, 2)
        k = self.k_proj(x).view(B, N, H, Dh).transpose(1, 2)
        v = self.v_proj(x).view(B, N, H, Dh).transpose(1, 2)
        with torch.no_grad():
            scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = torch.softmax(scores, dim=-1)
        out = self.out_proj((weights @ v).transpose(1, 2).contiguous().view(B, N, D))
        return (out, weights) if return_weights else out
