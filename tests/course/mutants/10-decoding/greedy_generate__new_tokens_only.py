"""greedy_generate: returns only the max_new_tokens generated ids, without the prompt in front.

Breaks: 10.greedy_generate.values
"""


def greedy_generate(model, prompt_ids, max_new_tokens):
    new = []
    with torch.no_grad():
        logits, cache = model(prompt_ids)
        for step in range(max_new_tokens):
            next_id = logits[:, -1].argmax(dim=-1, keepdim=True)
            new.append(next_id)
            if step < max_new_tokens - 1:
                logits, cache = model(next_id, cache=cache)
    return torch.cat(new, dim=1) if new else prompt_ids[:, :0]
