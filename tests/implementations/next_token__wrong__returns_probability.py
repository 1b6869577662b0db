# exercise: next_token · verdict: wrong · mistake: returns the highest probability
# check says: not an id
def next_token(h, W, b):
    return softmax(h @ W + b).max()
