"""simple_self_attention: returns .to("cpu") of the output.

Breaks: 03.simple_self_attention.device
"""
def simple_self_attention(X):
    return (softmax(X @ X.transpose(-2, -1), dim=-1) @ X).to("cpu")
