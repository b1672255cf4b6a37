"""SelfAttention whose forward passes mask by keyword to the student's scaled_dot_product_attention, with typed __init__."""
class SelfAttention(nn.Module):
    def __init__(self, input_dim: int, dim_k: int, dim_v: int) -> None:
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)

    def forward(self, x, mask=None):
        Q = self.q(x)
        out, _ = scaled_dot_product_attention(Q, self.k(x), self.v(x), mask=mask)
        return out
