# exercise: next_token · verdict: correct · list.index of the max: the first on a tie
# ruff: noqa: F821 (np and softmax are the notebook's)
def next_token(h, W, b):
    scores = (h @ W + b).tolist()
    return scores.index(max(scores))
