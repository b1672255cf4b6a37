"""conv1d_via_attention: calls the forbidden F.conv1d."""
def conv1d_via_attention(x, weight):
    K = weight.shape[-1]
    if K % 2 == 0 or weight.shape[1] != x.shape[-1]:
        raise ValueError("odd kernel and matching channels expected")
    return F.conv1d(x.transpose(1, 2), weight, padding=K // 2).transpose(1, 2)
