"""Independent reference values for implicit process rewards (PRIME) in the GRPO trainer.

Computes, in plain float64 Python (standard library only), on one small fixed
batch of two groups of three sequences x 5 tokens:

  * the implicit PRM's loss: with s_i = beta * sum_t MASK[i][t] * (LOGP[i][t] - REF[i][t])
    (the sequence's implicit outcome reward) and y_i = 1 if OUTCOME[i] > 0 else 0,
        loss = (1/N) * sum_i -[y_i * log(sigmoid(s_i)) + (1 - y_i) * log(1 - sigmoid(s_i))]
    its gradient with respect to LOGP, and the count of sequences with s_i > 0 == y_i;
  * the per-token advantages of PRIME's leave-one-out estimator (arXiv 2502.01456, Eq. 5),
    r[i][t] = beta * (LOGP[i][t] - REF[i][t]) on sampled tokens (MASK 1; 0 on tool responses),
        A[i][t] = coef * sum_{s >= t, MASK[i][s] = 1} (r[i][s] - b_i) + OUTCOME[i] - mean_{j != i} OUTCOME[j]
    with b_i the mean over the group's other sequences j of their mean reward per sampled token,
    and A[i][t] = 0 where MASK[i][t] = 0.

Every analytic gradient is checked against a central finite difference of the
loss (step 1e-6, tolerance 1e-6) before anything is printed.

prime_test.go loads prime_reference.json (the output of this script) and
compares ImplicitPRMLoss and ImplicitAdvantages against it. Regenerate with:

    /usr/bin/python3 prime_reference.py > prime_reference.json
"""

import json
import math

LOGP = [
    [-1.0, -0.5, -2.0, -0.1, -0.7],
    [-0.3, -1.2, -0.7, -3.0, -0.2],
    [-2.2, -0.05, -1.5, -0.9, -1.1],
    [-0.6, -0.4, -1.9, -0.8, -0.3],
    [-1.7, -0.2, -0.6, -2.4, -0.9],
    [-0.4, -1.4, -0.35, -0.5, -2.1],
]
REF = [
    [-1.4, -0.5, -1.5, -0.3, -0.2],
    [-0.3, -0.8, -0.9, -2.0, -0.6],
    [-2.0, -0.6, -1.5, -0.4, -1.3],
    [-0.9, -0.1, -1.2, -1.5, -0.3],
    [-1.1, -0.7, -0.2, -2.0, -1.6],
    [-0.2, -0.9, -1.0, -0.45, -1.2],
]
MASK = [
    [1, 1, 0, 0, 1],
    [1, 1, 1, 1, 0],
    [0, 1, 1, 1, 1],
    [1, 0, 1, 1, 1],
    [1, 1, 1, 0, 0],
    [1, 1, 1, 1, 1],
]
OUTCOME = [1.0, -1.0, 1.0, -1.0, -1.0, 0.5]
GROUP = 3

FD_STEP = 1e-6
FD_TOL = 1e-6


def implicit_reward(logp, i, beta):
    return beta * sum(m * (lp - r) for lp, r, m in zip(logp[i], REF[i], MASK[i]))


def prm_loss(logp, beta):
    n = len(logp)
    total = 0.0
    for i in range(n):
        s = implicit_reward(logp, i, beta)
        p = 1.0 / (1.0 + math.exp(-s))
        y = 1.0 if OUTCOME[i] > 0 else 0.0
        total += -(y * math.log(p) + (1.0 - y) * math.log(1.0 - p))
    return total / n


def prm_grad(logp, beta):
    """d loss / d LOGP[i][t] = (sigmoid(s_i) - y_i) * beta * MASK[i][t] / N."""
    n = len(logp)
    grad = []
    for i in range(n):
        s = implicit_reward(logp, i, beta)
        p = 1.0 / (1.0 + math.exp(-s))
        y = 1.0 if OUTCOME[i] > 0 else 0.0
        grad.append([(p - y) * beta * m / n for m in MASK[i]])
    return grad


def check_grad(beta, grad):
    for i in range(len(LOGP)):
        for t in range(len(LOGP[i])):
            up = [row[:] for row in LOGP]
            down = [row[:] for row in LOGP]
            up[i][t] += FD_STEP
            down[i][t] -= FD_STEP
            fd = (prm_loss(up, beta) - prm_loss(down, beta)) / (2 * FD_STEP)
            if abs(fd - grad[i][t]) > FD_TOL:
                raise SystemExit("gradient check failed at [%d][%d]: analytic %r, finite difference %r" % (i, t, grad[i][t], fd))


def correct(beta):
    n = 0
    for i in range(len(LOGP)):
        y = 1 if OUTCOME[i] > 0 else 0
        if (1 if implicit_reward(LOGP, i, beta) > 0 else 0) == y:
            n += 1
    return n


def advantages(beta, coef):
    rewards = [[beta * (LOGP[i][t] - REF[i][t]) if MASK[i][t] else 0.0 for t in range(len(MASK[i]))] for i in range(len(MASK))]
    per_token = []
    for i in range(len(MASK)):
        sampled = [rewards[i][t] for t in range(len(MASK[i])) if MASK[i][t]]
        per_token.append(sum(sampled) / len(sampled))
    out = []
    for i in range(len(MASK)):
        first = i - i % GROUP
        others = [j for j in range(first, first + GROUP) if j != i]
        baseline = sum(per_token[j] for j in others) / len(others)
        outcome = OUTCOME[i] - sum(OUTCOME[j] for j in others) / len(others)
        row = []
        for t in range(len(MASK[i])):
            if not MASK[i][t]:
                row.append(0.0)
                continue
            ret = sum(rewards[i][s] - baseline for s in range(t, len(MASK[i])) if MASK[i][s])
            row.append(coef * ret + outcome)
        out.append(row)
    return out


def main():
    cases = {}
    for name, beta, coef in [("beta0.05", 0.05, 1.0), ("beta0.5_coef0.5", 0.5, 0.5), ("beta2", 2.0, 1.0)]:
        grad = prm_grad(LOGP, beta)
        check_grad(beta, grad)
        cases[name] = {
            "beta": beta,
            "coef": coef,
            "loss": prm_loss(LOGP, beta),
            "grad": grad,
            "correct": correct(beta),
            "advantages": advantages(beta, coef),
        }
    print(json.dumps({"inputs": {"logp": LOGP, "ref": REF, "mask": MASK, "outcome": OUTCOME, "group": GROUP}, "cases": cases},
                     indent=1, sort_keys=True))


main()
