"""Reference values for FlowRL's learned log Z head (grpo.FlowRLHeadLogZ).

Builds the authors' ProjZModule (their verl fork, verl_FlowRL/verl/workers/fsdp_workers.py)
in torch float64 with num_layers 3 on hidden size 8, in eval mode (no dropout, as mathrl
runs it), with random weights (the LayerNorms' too, so that their scale and shift are
tested), and feeds it as their dp_actor does: each row laid out as a left-padded prompt
then a response of response_length tokens, the prompt part taken as
full_last_hidden[:, : -response_length - 1] (which leaves out the prompt's last token) and
averaged with verl_F.masked_mean (sum / (mask sum + 1e-8)) under the attention mask.

It writes the weights (PyTorch names, row-major), the hidden states in mathrl's layout
(prompt, then response, then right padding: [batch, seq, hidden]), each row's prompt
length and the head's log Z. Regenerate with (from this folder):

    /work/main/.cache/testdeps/venv/bin/python flowrl_head_reference.py > flowrl_head_reference.json
"""

import json

import torch

torch.manual_seed(2509)
H, LAYERS, SEQ, RESPONSE = 8, 3, 8, 3
PROMPT_LENS = [4, 2, 5]  # the second row's mean is over one position


class ProjZModule(torch.nn.Module):
    def __init__(self, hidden_size, num_layers=3, dropout=0.1):
        super().__init__()
        layers = []
        for _ in range(num_layers - 1):
            layers.extend([torch.nn.Linear(hidden_size, hidden_size), torch.nn.GELU(),
                           torch.nn.LayerNorm(hidden_size), torch.nn.Dropout(dropout)])
        layers.append(torch.nn.Linear(hidden_size, 1))
        self.net = torch.nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


head = ProjZModule(H, LAYERS).double().eval()
with torch.no_grad():
    for name, p in head.named_parameters():
        if name.endswith(".weight") and p.dim() == 1:  # LayerNorm: away from 1 and 0
            p.copy_(1 + 0.5 * torch.randn_like(p))
        elif p.dim() == 1 and int(name.split(".")[1]) % 4 == 2:
            p.copy_(0.3 * torch.randn_like(p))

rows = len(PROMPT_LENS)
prompts = [torch.randn(p, H, dtype=torch.float64) for p in PROMPT_LENS]
responses = [torch.randn(RESPONSE, H, dtype=torch.float64) for _ in PROMPT_LENS]

# verl's layout: prompt left-padded to max_prompt_len, then the response
max_prompt = max(PROMPT_LENS)
full = torch.zeros(rows, max_prompt + RESPONSE, H, dtype=torch.float64)
attention = torch.zeros(rows, max_prompt + RESPONSE, dtype=torch.float64)
for i, (p, r) in enumerate(zip(prompts, responses)):
    full[i, max_prompt - len(p):max_prompt] = p
    full[i, max_prompt:] = r
    attention[i, max_prompt - len(p):] = 1
prompt_hidden = full[:, : -RESPONSE - 1]
prompt_mask = attention[:, : -RESPONSE - 1].unsqueeze(-1)
avg = (prompt_hidden * prompt_mask).sum(dim=1) / (prompt_mask.sum(dim=1) + 1e-8)
with torch.no_grad():
    log_z = head(avg).squeeze(-1)

# mathrl's layout: prompt, response, right padding
mathrl = torch.zeros(rows, SEQ, H, dtype=torch.float64)
for i, (p, r) in enumerate(zip(prompts, responses)):
    mathrl[i, : len(p)] = p
    mathrl[i, len(p): len(p) + RESPONSE] = r
    mathrl[i, len(p) + RESPONSE:] = 100.0  # padding the mean must not see

print(json.dumps({
    "hidden_size": H, "layers": LAYERS, "prompt_lens": PROMPT_LENS,
    "weights": {n: p.detach().flatten().tolist() for n, p in head.named_parameters()},
    "hidden": mathrl.tolist(),
    "log_z": log_z.tolist(),
}, indent=1))
