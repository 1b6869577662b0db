# exercise: next_token · verdict: wrong · mistake: picks the lowest score
# check says: picks the lowest score
def next_token(h, W, b):
    return int(np.argmin(h @ W + b))
