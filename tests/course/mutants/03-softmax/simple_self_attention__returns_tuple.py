"""simple_self_attention: returns (output, weights) instead of the output alone."""
def simple_self_attention(X):
    W = attention_weights(X)
    return W @ X, W
