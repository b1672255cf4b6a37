"""gram_matrix: torch.mm with .t(), which only accepts 2-d matrices (no batches)."""
def gram_matrix(X):
    return torch.mm(X, X.t())
