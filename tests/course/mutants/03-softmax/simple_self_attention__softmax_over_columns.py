"""simple_self_attention: softmax over dim -2 before multiplying by X."""
def simple_self_attention(X):
    return softmax(X @ X.transpose(-2, -1), dim=-2) @ X
