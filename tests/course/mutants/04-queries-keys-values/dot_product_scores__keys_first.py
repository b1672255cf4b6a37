"""dot_product_scores: K Q^T, one row per key instead of per query (the transpose).

Breaks: 04.dot_product_scores.values
"""
def dot_product_scores(Q, K):
    return K @ Q.transpose(-2, -1)
