// Reference side of the tokenizer tests: Hugging Face's Rust tokenizers, through
// the npm package tokenizers@0.23.2 (set NODE_PATH to its node_modules).
//
//   node hfref.js encode TOKENIZER_JSON   stdin: JSON array of strings   -> JSON array of id arrays
//   node hfref.js decode TOKENIZER_JSON   stdin: JSON array of id arrays -> JSON array of [text, text skipping special]
//   node hfref.js pretok TOKENIZER_JSON   stdin: JSON array of strings   -> JSON array of piece arrays (pre-tokenizer only, byte-level form)
//   node hfref.js nfc - stdin: JSON array of strings -> JSON array of their NFC forms (tokenizers' NFC normalizer)
//   node hfref.js classes - stdin: JSON string S -> {"L": [...], "N": [...], "S": [...]}, for each of the
//     regex classes \p{L}, \p{N} and \s the indexes (in code points) of the characters of S it matches
//   node hfref.js bench TOKENIZER_JSON ROUNDS  stdin: JSON array of strings
//     -> {"single": {"seconds": s, "tokens": n}, "batch": {...}}: the fastest of ROUNDS passes over the strings
"use strict";
const { Tokenizer } = require("tokenizers");

function readStdin() {
  return JSON.parse(require("fs").readFileSync(0, "utf8"));
}

async function main() {
  const [mode, file, arg] = process.argv.slice(2);
  const tok = file === "-" ? null : Tokenizer.fromFile(file);
  const input = readStdin();
  let out;
  switch (mode) {
    case "encode": {
      const encs = await tok.encodeBatch(input, { addSpecialTokens: false });
      out = encs.map((e) => e.getIds());
      break;
    }
    case "decode": {
      out = [];
      for (const ids of input) {
        out.push([await tok.decode(ids, false), await tok.decode(ids, true)]);
      }
      break;
    }
    case "pretok": {
      const pre = tok.getPreTokenizer();
      out = input.map((s) => pre.preTokenizeString(s).map((p) => p[0]));
      break;
    }
    case "nfc": {
      const n = require("tokenizers").nfcNormalizer();
      out = input.map((s) => n.normalizeString(s));
      break;
    }
    case "classes": {
      const chars = Array.from(input);
      out = {};
      for (const [name, pattern] of [["L", "\\p{L}"], ["N", "\\p{N}"], ["S", "\\s"]]) {
        const spec = {
          version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer: null,
          pre_tokenizer: { type: "Split", pattern: { Regex: pattern }, behavior: "Removed", invert: false },
          post_processor: null, decoder: null,
          model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null,
            end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab: {}, merges: [] },
        };
        const pre = Tokenizer.fromString(JSON.stringify(spec)).getPreTokenizer();
        const matched = new Uint8Array(chars.length).fill(1);
        for (const [, [a, b]] of pre.preTokenizeString(input)) matched.fill(0, a, b);
        out[name] = [];
        matched.forEach((m, i) => { if (m) out[name].push(i); });
      }
      break;
    }
    case "bench": {
      // Two ways of using the library: one encode() call per text (each a call
      // into the Rust addon), and one encodeBatch() over the whole corpus (set
      // RAYON_NUM_THREADS=1 to keep it on one core). Both are timed.
      const rounds = Number(arg);
      await tok.encodeBatch(input.slice(0, 50), { addSpecialTokens: false }); // warm up
      // The fastest of the rounds is kept: the least disturbed by other work on the machine.
      const time = async (f) => {
        let best = Infinity, tokens = 0;
        for (let r = 0; r < rounds; r++) {
          const t0 = process.hrtime.bigint();
          tokens = await f();
          best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
        }
        return { seconds: best, tokens };
      };
      out = {
        single: await time(async () => {
          let n = 0;
          for (const s of input) n += (await tok.encode(s, null, { addSpecialTokens: false })).getIds().length;
          return n;
        }),
        batch: await time(async () => {
          let n = 0;
          for (const e of await tok.encodeBatch(input, { addSpecialTokens: false })) n += e.getIds().length;
          return n;
        }),
      };
      break;
    }
    default:
      throw new Error("unknown mode " + mode);
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
