"""load_torch_weights: assigns new nn.Parameter objects instead of copying into the existing ones (an optimizer built before loading would train the old tensors).

Breaks: 06.load_torch_weights.in_place
"""


def load_torch_weights(module, reference):
    if reference.embed_dim != module.d_model or reference.num_heads != module.num_heads:
        raise ValueError("d_model and num_heads must match")
    w_q, w_k, w_v = reference.in_proj_weight.detach().clone().chunk(3, dim=0)
    for proj, w in zip((module.q_proj, module.k_proj, module.v_proj), (w_q, w_k, w_v)):
        proj.weight = nn.Parameter(w.clone())
    module.out_proj.weight = nn.Parameter(reference.out_proj.weight.detach().clone())
    if reference.in_proj_bias is not None:
        for proj, b in zip((module.q_proj, module.k_proj, module.v_proj), reference.in_proj_bias.detach().clone().chunk(3)):
            proj.bias = nn.Parameter(b.clone())
        module.out_proj.bias = nn.Parameter(reference.out_proj.bias.detach().clone())
