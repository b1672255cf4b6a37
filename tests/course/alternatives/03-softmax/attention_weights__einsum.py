"""attention_weights with the scores written as an einsum.
"""
def attention_weights(X):
    return softmax(torch.einsum("...nd,...md->...nm", X, X), dim=-1)
