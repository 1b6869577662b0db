# exercise: next_token · verdict: wrong · mistake: on a tie picks the last of the highest scores
# check says: On a tie
def next_token(h, W, b):
    return int(np.argsort(h @ W + b)[-1])
