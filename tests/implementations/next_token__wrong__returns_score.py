# exercise: next_token · verdict: wrong · mistake: returns the score, not the id
# check says: not its id
def next_token(h, W, b):
    scores = h @ W + b
    return np.max(scores)
