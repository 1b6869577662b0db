# exercise: greedy_decode · verdict: wrong · mistake: stops at id 1 whatever eos is
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: whatever eos is
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(np.argmax(model(ids)[-1]))
        ids.append(nxt)
        if nxt == 1:
            break
    return ids
