"""conv1d_via_attention: all K shift matrices stacked into one (K, N, N) tensor and contracted with einsum."""
def conv1d_via_attention(x, weight):
    if weight.shape[-1] % 2 == 0 or weight.shape[1] != x.shape[-1]:
        raise ValueError("need an odd kernel and matching channels")
    N, K = x.shape[1], weight.shape[-1]
    S = torch.stack([shift_attention_matrix(N, k - K // 2) for k in range(K)]).to(x)   # (K, N, N)
    return torch.einsum("knm,bmc,ock->bno", S, x, weight)
