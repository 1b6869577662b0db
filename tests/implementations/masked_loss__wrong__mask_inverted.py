# exercise: masked_loss · verdict: wrong · mistake: keeps the PAD rows and drops the others
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: keeps the PAD rows
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    nll = -np.log(p[np.arange(len(targets)), targets])
    return float(nll[targets == pad].mean())
