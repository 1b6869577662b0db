# exercise: next_token · verdict: wrong · mistake: returns the highest probability
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: not an id
def next_token(h, W, b):
    return softmax(h @ W + b).max()
