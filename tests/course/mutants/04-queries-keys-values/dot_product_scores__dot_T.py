"""dot_product_scores: Q @ K.T, which reverses every dimension of a batch."""
def dot_product_scores(Q, K):
    return Q @ K.T
