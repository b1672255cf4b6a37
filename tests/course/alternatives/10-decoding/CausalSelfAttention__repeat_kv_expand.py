"""CausalSelfAttention in the Llama style: repeat_kv with expand + reshape, an additive float mask built from arange, cache kept as a tuple."""


def repeat_kv(hidden, n_rep):
    """(B, KV, T, dh) -> (B, KV * n_rep, T, dh): each key/value head repeated for the n_rep query heads of its group."""
    B, KV, T, dh = hidden.shape
    if n_rep == 1:
        return hidden
    return hidden[:, :, None].expand(B, KV, n_rep, T, dh).reshape(B, KV * n_rep, T, dh)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads=None):
        super().__init__()
        self.n_heads = num_heads
        self.n_kv = num_heads if num_kv_heads is None else num_kv_heads
        if d_model % num_heads or num_heads % self.n_kv:
            raise ValueError("num_heads must divide d_model and num_kv_heads must divide num_heads")
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, num_heads * self.head_dim)
        self.k_proj = nn.Linear(d_model, self.n_kv * self.head_dim)
        self.v_proj = nn.Linear(d_model, self.n_kv * self.head_dim)
        self.out_proj = nn.Linear(num_heads * self.head_dim, d_model)

    def forward(self, x, cache=None):
        bsz, seqlen, _ = x.shape
        xq = self.q_proj(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xk = self.k_proj(x).view(bsz, seqlen, self.n_kv, self.head_dim).transpose(1, 2)
        xv = self.v_proj(x).view(bsz, seqlen, self.n_kv, self.head_dim).transpose(1, 2)
        if cache is not None:
            xk = torch.cat((cache[0], xk), dim=2)
            xv = torch.cat((cache[1], xv), dim=2)
        start = xk.shape[2] - seqlen
        keys, values = repeat_kv(xk, self.n_heads // self.n_kv), repeat_kv(xv, self.n_heads // self.n_kv)
        rows = torch.arange(start, start + seqlen, device=x.device)[:, None]
        cols = torch.arange(xk.shape[2], device=x.device)[None, :]
        bias = torch.zeros(rows.shape[0], cols.shape[1], dtype=x.dtype, device=x.device).masked_fill(cols > rows, float("-inf"))
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim) + bias
        probs = torch.softmax(scores.float(), dim=-1).type_as(xq)
        out = torch.matmul(probs, values).transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.out_proj(out), (xk, xv)
