"""load_torch_weights through module.load_state_dict with the blocks of in_proj renamed (copies in place)."""


def load_torch_weights(module, reference):
    if (reference.embed_dim, reference.num_heads) != (module.d_model, module.num_heads):
        raise ValueError("reference and module differ in d_model or num_heads")
    w = reference.in_proj_weight.detach().chunk(3)
    state = {"q_proj.weight": w[0], "k_proj.weight": w[1], "v_proj.weight": w[2], "out_proj.weight": reference.out_proj.weight.detach()}
    if reference.in_proj_bias is not None:
        b = reference.in_proj_bias.detach().chunk(3)
        state.update({"q_proj.bias": b[0], "k_proj.bias": b[1], "v_proj.bias": b[2], "out_proj.bias": reference.out_proj.bias.detach()})
    module.load_state_dict(state)
