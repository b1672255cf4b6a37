"""greedy_generate: feeds each new token alone but without the cache, so the model forgets the prefix."""


def greedy_generate(model, prompt_ids, max_new_tokens):
    ids = prompt_ids.clone()
    with torch.no_grad():
        logits, _ = model(prompt_ids)
        for step in range(max_new_tokens):
            next_id = logits[:, -1].argmax(dim=-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
            if step < max_new_tokens - 1:
                logits, _ = model(next_id)
    return ids
