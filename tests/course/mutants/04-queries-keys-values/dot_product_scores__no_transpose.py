"""dot_product_scores: Q @ K without transposing (only runs when Nk == d, and is then wrong).

Breaks: 04.dot_product_scores.values
"""
def dot_product_scores(Q, K):
    return Q @ K
