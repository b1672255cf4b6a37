"""SelfAttention: builds the three layers without bias (nn.Linear(..., bias=False)).

Breaks: 05.SelfAttention.parameters
"""


class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k, bias=False)
        self.k = nn.Linear(input_dim, dim_k, bias=False)
        self.v = nn.Linear(input_dim, dim_v, bias=False)

    def forward(self, x, mask=None):
        output, _ = scaled_dot_product_attention(self.q(x), self.k(x), self.v(x), mask)
        return output
