"""attention_weights: moves the weights to the CPU (.cpu()) before returning them.

Breaks: 03.attention_weights.device
"""
def attention_weights(X):
    return softmax(X @ X.transpose(-2, -1), dim=-1).cpu()
