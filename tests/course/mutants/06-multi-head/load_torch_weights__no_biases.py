"""load_torch_weights: copies the weights but forgets the biases (PyTorch initialises them to zero, so the default case hides it)."""


def load_torch_weights(module, reference):
    if reference.embed_dim != module.d_model or reference.num_heads != module.num_heads:
        raise ValueError("d_model and num_heads must match")
    with torch.no_grad():
        w_q, w_k, w_v = reference.in_proj_weight.chunk(3, dim=0)
        module.q_proj.weight.copy_(w_q)
        module.k_proj.weight.copy_(w_k)
        module.v_proj.weight.copy_(w_v)
        module.out_proj.weight.copy_(reference.out_proj.weight)
