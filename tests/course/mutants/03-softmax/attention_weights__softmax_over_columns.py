"""attention_weights: softmax over dim -2, so columns sum to one instead of rows."""
def attention_weights(X):
    return softmax(X @ X.transpose(-2, -1), dim=-2)
