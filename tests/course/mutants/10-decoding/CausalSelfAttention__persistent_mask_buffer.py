"""CausalSelfAttention: registers a (1, 1, 256, 256) lower-triangular buffer as nanoGPT does, so the state_dict holds more than the four projections.

Breaks: 10.CausalSelfAttention.parameters
"""


class CausalSelfAttention(CausalSelfAttention):
    def __init__(self, d_model, num_heads, num_kv_heads=None):
        super().__init__(d_model, num_heads, num_kv_heads)
        self.register_buffer("bias", torch.tril(torch.ones(256, 256)).view(1, 1, 256, 256))
