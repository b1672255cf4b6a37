"""simple_self_attention: uses W^T X, mixing with the columns of the weights."""
def simple_self_attention(X):
    return attention_weights(X).transpose(-2, -1) @ X
