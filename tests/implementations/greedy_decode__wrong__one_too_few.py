# exercise: greedy_decode · verdict: wrong · mistake: off by one, the while loop stops one token early
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: one token too few
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    while len(ids) < len(prompt) + max_new - 1:
        nxt = int(np.argmax(model(ids)[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids
