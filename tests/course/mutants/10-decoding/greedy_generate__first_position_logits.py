"""greedy_generate: takes the argmax of logits[:, 0] (the first position) instead of the last one.

Breaks: 10.greedy_generate.values
"""


def greedy_generate(model, prompt_ids, max_new_tokens):
    ids = prompt_ids.clone()
    with torch.no_grad():
        logits, cache = model(prompt_ids)
        for step in range(max_new_tokens):
            next_id = logits[:, 0].argmax(dim=-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
            if step < max_new_tokens - 1:
                logits, cache = model(next_id, cache=cache)
    return ids
