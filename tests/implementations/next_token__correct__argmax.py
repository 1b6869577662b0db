# exercise: next_token · verdict: correct · the plain NumPy answer
def next_token(h, W, b):
    scores = h @ W + b  # (V,)
    return int(np.argmax(scores))
