# exercise: masked_loss · verdict: correct · drops the PAD rows first, then a plain mean
def masked_loss(logits, targets, pad=0):
    keep = targets != pad
    logits, targets = logits[keep], targets[keep]
    p = softmax(logits)
    return float(np.mean(-np.log(p[np.arange(len(targets)), targets])))
