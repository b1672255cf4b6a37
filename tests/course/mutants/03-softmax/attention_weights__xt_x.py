"""attention_weights: softmax(X^T X), comparing features instead of tokens."""
def attention_weights(X):
    return softmax(X.transpose(-2, -1) @ X, dim=-1)
