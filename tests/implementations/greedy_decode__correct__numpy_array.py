# exercise: greedy_decode · verdict: correct · keeps the ids in a NumPy array and returns it
# ruff: noqa: F821 (np and softmax are the notebook's)
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = np.array(prompt, dtype=np.int64)
    for _ in range(max_new):
        nxt = np.argmax(model(ids)[-1])
        ids = np.append(ids, nxt)
        if nxt == eos:
            break
    return ids
