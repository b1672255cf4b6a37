"""attention_weights: adds a batch dimension in place (X.unsqueeze_(0)), changing the caller's X.

Breaks: 03.attention_weights.unchanged
"""
def attention_weights(X):
    X.unsqueeze_(0)
    return softmax(X @ X.transpose(-2, -1), dim=-1).squeeze(0)
