"""MultiHeadSelfAttention: forgets the ValueError; an indivisible d_model builds a layer whose heads do not cover d_model.

Breaks: 06.MultiHeadSelfAttention.errors
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """The reference forward; __init__ without the divisibility check."""

    def __init__(self, d_model, num_heads, bias=True):
        nn.Module.__init__(self)
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, max(d_model // num_heads, 1)
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
