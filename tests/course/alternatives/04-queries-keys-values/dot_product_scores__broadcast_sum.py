"""dot_product_scores by broadcasting the elementwise product and summing the feature dim."""
def dot_product_scores(Q, K):
    return (Q.unsqueeze(-2) * K.unsqueeze(-3)).sum(dim=-1)
