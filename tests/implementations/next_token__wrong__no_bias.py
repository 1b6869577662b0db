# exercise: next_token · verdict: wrong · mistake: forgets the bias
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: The bias b is missing
def next_token(h, W, b):
    return int(np.argmax(h @ W))
