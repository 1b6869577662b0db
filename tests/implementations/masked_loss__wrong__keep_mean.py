# exercise: masked_loss · verdict: wrong · mistake: (nll * keep).mean() divides by all N rows
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: divides the sum by every row, PAD rows included
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    nll = -np.log(p[np.arange(len(targets)), targets])
    keep = targets != pad
    return float((nll * keep).mean())
