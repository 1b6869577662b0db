# exercise: masked_loss · verdict: correct · the notebook's softmax, pick, mask, mean
# ruff: noqa: F821 (np and softmax are the notebook's)
def masked_loss(logits, targets, pad=0):
    N = len(targets)
    p = softmax(logits)  # (N, V)
    nll = -np.log(p[np.arange(N), targets])  # (N,)
    keep = targets != pad
    return float(nll[keep].mean())
