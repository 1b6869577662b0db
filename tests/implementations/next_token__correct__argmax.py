# exercise: next_token · verdict: correct · the plain NumPy answer
# ruff: noqa: F821 (np and softmax are the notebook's)
def next_token(h, W, b):
    scores = h @ W + b  # (V,)
    return int(np.argmax(scores))
