"""dot_product_scores: Q^T K, comparing features instead of tokens.

Breaks: 04.dot_product_scores.values
"""
def dot_product_scores(Q, K):
    return Q.transpose(-2, -1) @ K
