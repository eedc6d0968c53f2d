"""transformers as the reference for a Qwen3 checkpoint folder, on the CPU in float32.

  hf_qwen3.py logits DIR        < {"input_ids": [...]} lines  > {"logits": [[...], ...]} lines (every position)
  hf_qwen3.py greedy DIR N      < {"input_ids": [...]} lines  > {"output_ids": [...]} lines (N new tokens each)

The folder is loaded with AutoModelForCausalLM as a user of the checkpoint would
load it, in the dtype it is stored in, then computed in float32: a bfloat16
checkpoint's RoPE frequencies stay rounded to bfloat16, as they are in its
users' models (mathrl's qwen3.Config.RopeBF16 follows them). Greedy decoding runs `generate` with do_sample=False and no stop token,
so that every prompt gets exactly N new tokens.
"""
import json
import sys

import torch
from transformers import AutoModelForCausalLM


def load(folder):
    model = AutoModelForCausalLM.from_pretrained(folder, dtype="auto").float().eval()
    model.generation_config.eos_token_id = None
    return model


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    model = load(folder)
    for line in sys.stdin:
        if not line.strip():
            continue
        ids = torch.tensor([json.loads(line)["input_ids"]])
        with torch.no_grad():
            if mode == "logits":
                out = {"logits": model(ids).logits[0].tolist()}
            elif mode == "greedy":
                n = int(sys.argv[3])
                seq = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                     max_new_tokens=n, pad_token_id=0)
                out = {"output_ids": seq[0, ids.shape[1]:].tolist()}
            else:
                sys.exit(f"hf_qwen3.py: unknown mode {mode!r} (logits or greedy)")
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
