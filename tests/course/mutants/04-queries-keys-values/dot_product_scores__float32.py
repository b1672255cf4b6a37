"""dot_product_scores: computes in float32 whatever the input dtype.

Breaks: 04.dot_product_scores.dtype_device
"""
def dot_product_scores(Q, K):
    return Q.float() @ K.float().transpose(-2, -1)
