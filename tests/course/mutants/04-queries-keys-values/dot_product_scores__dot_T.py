"""dot_product_scores: Q @ K.T, which reverses every dimension of a batch.

Breaks: 04.dot_product_scores.values
"""
def dot_product_scores(Q, K):
    return Q @ K.T
