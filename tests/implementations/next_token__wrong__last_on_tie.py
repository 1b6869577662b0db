# exercise: next_token · verdict: wrong · mistake: on a tie picks the last of the highest scores
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: On a tie
def next_token(h, W, b):
    return int(np.argsort(h @ W + b)[-1])
