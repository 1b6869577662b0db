# exercise: greedy_decode · verdict: wrong · mistake: never stops at eos
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: does not stop at eos
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        ids.append(int(np.argmax(model(ids)[-1])))
    return ids
