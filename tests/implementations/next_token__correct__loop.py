# exercise: next_token · verdict: correct · plain Python loops, the first of equal scores wins
# ruff: noqa: F821 (np and softmax are the notebook's)
def next_token(h, W, b):
    best_id, best = None, None
    for j in range(len(b)):
        score = b[j]
        for i in range(len(h)):
            score += h[i] * W[i][j]
        if best is None or score > best:
            best_id, best = j, score
    return best_id
