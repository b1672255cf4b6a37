"""self_attention built from the notebook's own pieces: project_qkv, then dot_product_scores, then attend."""
def self_attention(X, W_q, W_k, W_v):
    queries, keys, values = project_qkv(X, W_q, W_k, W_v)
    mixed, _weights = attend(dot_product_scores(queries, keys), values)
    return mixed
