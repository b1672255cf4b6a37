"""self_attention: returns attend's (output, weights) tuple instead of the output."""
def self_attention(X, W_q, W_k, W_v):
    Q, K, V = project_qkv(X, W_q, W_k, W_v)
    return attend(dot_product_scores(Q, K), V)
