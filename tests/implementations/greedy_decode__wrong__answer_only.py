# exercise: greedy_decode · verdict: wrong · mistake: returns only the new ids, without the prompt
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: Return the whole list
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    new = []
    for _ in range(max_new):
        nxt = int(np.argmax(model(ids)[-1]))
        ids.append(nxt)
        new.append(nxt)
        if nxt == eos:
            break
    return new
