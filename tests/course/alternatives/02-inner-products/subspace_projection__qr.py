"""subspace_projection: an orthonormal basis of the span from a QR decomposition of B^T, then X Q Q^T."""
def subspace_projection(X, B):
    Q, _ = torch.linalg.qr(B.mT)  # (D, K), orthonormal columns spanning the rows of B
    return X @ Q @ Q.mT
