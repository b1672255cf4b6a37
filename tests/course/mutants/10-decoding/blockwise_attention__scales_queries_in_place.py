"""blockwise_attention: divides Q by sqrt(D) in place once, to save a division per block, which changes the caller's Q.

Breaks: 10.blockwise_attention.unchanged
"""

_reference_blockwise = blockwise_attention


def blockwise_attention(Q, K, V, block_size, causal=False):
    D = Q.shape[-1]
    Q.mul_(1 / math.sqrt(D))
    return _reference_blockwise(Q * math.sqrt(D), K, V, block_size, causal)
