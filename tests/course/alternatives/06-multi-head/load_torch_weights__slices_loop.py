"""load_torch_weights with explicit row slices in a loop and .data.copy_ (in place, no autograd)."""


def load_torch_weights(module, reference):
    d = reference.embed_dim
    if d != module.q_proj.in_features or reference.num_heads != module.num_heads:
        raise ValueError("shape mismatch between reference and module")
    for i, proj in enumerate((module.q_proj, module.k_proj, module.v_proj)):
        proj.weight.data.copy_(reference.in_proj_weight.data[i * d : (i + 1) * d])
        if reference.in_proj_bias is not None:
            proj.bias.data.copy_(reference.in_proj_bias.data[i * d : (i + 1) * d])
    module.out_proj.weight.data.copy_(reference.out_proj.weight.data)
    if reference.out_proj.bias is not None:
        module.out_proj.bias.data.copy_(reference.out_proj.bias.data)
