"""dot_product_scores: divides by sqrt(d) (chapter 5's scaling, not this contract).

Breaks: 04.dot_product_scores.values
"""
def dot_product_scores(Q, K):
    return Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
