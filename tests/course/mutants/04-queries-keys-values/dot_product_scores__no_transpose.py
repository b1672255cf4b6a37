"""dot_product_scores: Q @ K without transposing (only runs when Nk == d, and is then wrong)."""
def dot_product_scores(Q, K):
    return Q @ K
