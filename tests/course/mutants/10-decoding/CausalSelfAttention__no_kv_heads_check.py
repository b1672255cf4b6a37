"""CausalSelfAttention: checks that num_heads divides d_model but not that num_kv_heads divides num_heads.

Breaks: 10.CausalSelfAttention.errors
"""


class CausalSelfAttention(CausalSelfAttention):
    def __init__(self, d_model, num_heads, num_kv_heads=None):
        nn.Module.__init__(self)
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.num_heads, self.num_kv_heads, self.d_head = num_heads, num_kv_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, num_kv_heads * self.d_head)
        self.v_proj = nn.Linear(d_model, num_kv_heads * self.d_head)
        self.out_proj = nn.Linear(d_model, d_model)
