"""dot_product_scores: Q^T K, comparing features instead of tokens."""
def dot_product_scores(Q, K):
    return Q.transpose(-2, -1) @ K
