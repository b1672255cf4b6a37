"""dot_product_scores: transposes K with the in-place transpose_, leaving the caller's K transposed.

Breaks: 04.dot_product_scores.unchanged
"""
def dot_product_scores(Q, K):
    K.transpose_(-2, -1)
    return Q @ K
