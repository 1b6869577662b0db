# exercise: next_token · verdict: wrong · mistake: picks the lowest score
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: picks the lowest score
def next_token(h, W, b):
    return int(np.argmin(h @ W + b))
