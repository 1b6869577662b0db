# exercise: masked_loss · verdict: wrong · mistake: averages over every row, PAD rows included
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: PAD rows included
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    nll = -np.log(p[np.arange(len(targets)), targets])
    return float(nll.mean())
