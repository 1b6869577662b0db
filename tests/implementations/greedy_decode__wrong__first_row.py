# exercise: greedy_decode · verdict: wrong · mistake: reads the first row instead of the last
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: reads the first row
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(np.argmax(model(ids)[0]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids
