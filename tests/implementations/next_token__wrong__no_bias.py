# exercise: next_token · verdict: wrong · mistake: forgets the bias
# check says: The bias b is missing
def next_token(h, W, b):
    return int(np.argmax(h @ W))
