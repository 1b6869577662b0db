# exercise: masked_loss · verdict: correct · a Python loop over the rows
# ruff: noqa: F821 (np and softmax are the notebook's)
def masked_loss(logits, targets, pad=0):
    total, count = 0.0, 0
    for i in range(len(targets)):
        if targets[i] == pad:
            continue
        p = softmax(logits[i])
        total += -np.log(p[targets[i]])
        count += 1
    return total / count
