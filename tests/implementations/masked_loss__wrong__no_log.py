# exercise: masked_loss · verdict: wrong · mistake: −p instead of −log p
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: not −p
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    picked = p[np.arange(len(targets)), targets]
    return float(-picked[targets != pad].mean())
