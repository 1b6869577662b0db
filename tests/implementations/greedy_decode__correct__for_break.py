# exercise: greedy_decode · verdict: correct · for loop, append, then break at eos
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for step in range(max_new):
        scores = model(ids)  # (len(ids), V)
        nxt = int(np.argmax(scores[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids
