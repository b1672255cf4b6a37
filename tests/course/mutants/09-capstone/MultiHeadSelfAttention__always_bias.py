"""MultiHeadSelfAttention: ignores bias=False, every projection gets a bias.

Breaks: 09.MultiHeadSelfAttention.projections
"""
class MultiHeadSelfAttention(MultiHeadSelfAttention):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__(d_model, num_heads, True)
