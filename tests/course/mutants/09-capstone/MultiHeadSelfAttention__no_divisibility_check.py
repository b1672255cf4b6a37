"""MultiHeadSelfAttention: no ValueError when d_model is not divisible by num_heads (the heads silently get d_model // num_heads features).

Breaks: 09.MultiHeadSelfAttention.errors
"""
class MultiHeadSelfAttention(MultiHeadSelfAttention):  # the reference forward, an __init__ without the check
    def __init__(self, d_model, num_heads, bias=True):
        nn.Module.__init__(self)
        self.num_heads = num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model, bias=bias) for _ in range(4))
