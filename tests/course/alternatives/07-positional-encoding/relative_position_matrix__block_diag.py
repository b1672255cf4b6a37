"""relative_position_matrix from a list of 2x2 blocks joined with torch.block_diag, math.cos/sin per pair."""
import math

def relative_position_matrix(k, d_model):
    blocks = []
    for i in range(d_model // 2):
        phi = k * 10000 ** (-2 * i / d_model)
        c, s = math.cos(phi), math.sin(phi)
        blocks.append(torch.tensor([[c, s], [-s, c]], dtype=torch.float64))
    return torch.block_diag(*blocks).to(torch.float32)
