"""dot_product_scores with einsum."""
def dot_product_scores(Q, K):
    return torch.einsum("...id,...jd->...ij", Q, K)
