# exercise: greedy_decode · verdict: correct · no NumPy: max over the positions of the last row
# ruff: noqa: F821 (np and softmax are the notebook's)
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = [i for i in prompt]
    done = False
    for _ in range(max_new):
        if done:
            break
        last = list(model(ids)[-1])
        nxt = max(range(len(last)), key=lambda j: last[j])
        ids = ids + [nxt]
        done = nxt == eos
    return ids
