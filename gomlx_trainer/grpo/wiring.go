package grpo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/mathrl/mathrl/data"
	"github.com/mathrl/mathrl/data/arith"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/rollout"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

// Chat is the text side of a run: the tokenizer, the prompt template and the
// tool protocol (it implements rollout.Protocol).
type Chat struct {
	Tok          *tokenizer.Tokenizer
	JSON         []byte // the tokenizer.json, copied into checkpoints
	SystemPrompt string
	UseTools     bool
	OfferSpec    bool // list the code_interpreter spec in the system turn
}

// NewChat loads the tokenizer named by cfg: "bytes", a tokenizer.json path, or
// the one in the model folder.
func NewChat(cfg Config, modelVocab int) (*Chat, error) {
	path := cfg.Tokenizer
	if path == "" && cfg.TinyModel != "" && modelVocab < 1000 {
		path = "bytes"
	}
	if path == "" {
		path = filepath.Join(cfg.HFCheckpoint, "tokenizer.json")
	}
	c := &Chat{SystemPrompt: cfg.SystemPrompt, UseTools: cfg.UseTools, OfferSpec: cfg.OfferToolSpec}
	if path == "bytes" {
		c.Tok = tokenizer.NewBytes()
		var b bytes.Buffer
		if err := c.Tok.WriteJSON(&b); err != nil {
			return nil, fmt.Errorf("grpo: %w", err)
		}
		c.JSON = b.Bytes()
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("grpo: tokenizer: %w", err)
		}
		if c.Tok, err = tokenizer.Parse(data); err != nil {
			return nil, fmt.Errorf("grpo: tokenizer %s: %w", path, err)
		}
		c.JSON = data
	}
	if c.Tok.VocabSize() > modelVocab {
		return nil, fmt.Errorf("grpo: tokenizer has %d ids, the model's vocabulary only %d", c.Tok.VocabSize(), modelVocab)
	}
	sp := c.Tok.Special()
	if sp.IMEnd < 0 || sp.IMStart < 0 || (cfg.UseTools && sp.ToolCallEnd < 0) {
		return nil, errors.New("grpo: tokenizer lacks <|im_start|>, <|im_end|> or </tool_call>")
	}
	return c, nil
}

// PromptIDs renders a problem as the chat prompt (system turn with the tool
// spec when tools are on, the user turn, the generation prompt) and encodes it.
func (c *Chat) PromptIDs(problem string) ([]int, error) {
	var msgs []tokenizer.Message
	system := c.SystemPrompt
	if system == "" && c.UseTools && c.OfferSpec {
		system = tokenizer.SystemPrompt
	}
	if system != "" {
		msgs = append(msgs, tokenizer.Message{Role: "system", Content: system})
	}
	msgs = append(msgs, tokenizer.Message{Role: "user", Content: problem})
	var tools []tokenizer.Tool
	if c.UseTools && c.OfferSpec {
		tools = []tokenizer.Tool{tokenizer.CodeInterpreterTool}
	}
	text, err := tokenizer.RenderChat(msgs, tools, true)
	if err != nil {
		return nil, fmt.Errorf("grpo: prompt: %w", err)
	}
	return c.Tok.Encode(text), nil
}

// Decode implements rollout.Protocol (special tokens kept).
func (c *Chat) Decode(ids []int) string { return c.Tok.Decode(ids, false) }

// ParseToolCall implements rollout.Protocol: the code of the last tool call of
// the turn, or the parser's message for a malformed one.
func (c *Chat) ParseToolCall(text string) (string, error) {
	calls := tokenizer.ParseToolCalls(text)
	if len(calls) == 0 {
		return "", errors.New("no <tool_call> block found")
	}
	last := calls[len(calls)-1]
	if !last.OK() {
		return "", errors.New(last.Err)
	}
	return last.Code, nil
}

// ToolResponseIDs implements rollout.Protocol.
func (c *Chat) ToolResponseIDs(response string) []int {
	return c.Tok.ToolResponseIDs([]string{response})
}

// TraceSequence renders a warm-start trace as the token stream a rollout would
// produce: the prompt, then the response with mask 1 on what the assistant
// writes and 0 on the tool's response turn. toolOutput is the real output of
// the trace's code.
func (c *Chat) TraceSequence(tr arith.Trace, toolOutput string) (Sequence, error) {
	prompt, err := c.PromptIDs(tr.Problem)
	if err != nil {
		return Sequence{}, err
	}
	var s Sequence
	s.Prompt = prompt
	add := func(ids []int, mask float32) {
		s.Response = append(s.Response, ids...)
		for range ids {
			s.Mask = append(s.Mask, mask)
			s.LogProbs = append(s.LogProbs, 0)
		}
	}
	if tr.Code != "" {
		call, err := tokenizer.RenderChat([]tokenizer.Message{{Role: "assistant", ToolCalls: []tokenizer.MessageToolCall{
			{FunctionCall: tokenizer.FunctionCall{Name: tokenizer.CodeInterpreterName, Arguments: codeArguments(tr.Code)}},
		}}}, nil, false)
		if err != nil {
			return Sequence{}, fmt.Errorf("grpo: trace: %w", err)
		}
		// the assistant turn renders as <|im_start|>assistant\n<tool_call>...</tool_call><|im_end|>\n;
		// the model writes what lies between the header and <|im_end|>.
		body := call[len(tokenizer.IMStart+"assistant\n") : len(call)-len(tokenizer.IMEnd+"\n")]
		add(c.Tok.Encode(body), 1)
		add(c.ToolResponseIDs(toolOutput), 0)
	}
	add(c.Tok.Encode(tr.Final+tokenizer.IMEnd), 1)
	return s, nil
}

// codeArguments is the JSON object {"code": code}; the template re-renders it as tojson does.
func codeArguments(code string) []byte {
	b, _ := json.Marshal(map[string]string{"code": code}) // a map of strings always marshals
	return b
}

// samplerSession adapts a sampler.Session to rollout.Session: one Generate
// call steps the session until every listed sequence has stopped.
type samplerSession struct {
	ss   *sampler.Session
	seen []int // ids of each sequence already handed to the rollout loop
}

func (a *samplerSession) Generate(ctx context.Context, active, maxNew []int) ([]rollout.Turn, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		more, err := a.ss.Step()
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	turns := make([]rollout.Turn, len(active))
	for j, i := range active {
		r := a.ss.Result(i)
		turns[j] = rollout.Turn{IDs: r.IDs[a.seen[i]:], LogProbs: r.LogProbs[a.seen[i]:]}
		if len(turns[j].IDs) > maxNew[j] {
			turns[j].IDs, turns[j].LogProbs = turns[j].IDs[:maxNew[j]], turns[j].LogProbs[:maxNew[j]]
		}
		a.seen[i] = len(r.IDs)
	}
	return turns, nil
}

func (a *samplerSession) Append(i int, ids []int) error {
	if err := a.ss.Append(i, ids); err != nil {
		return err
	}
	a.seen[i] = len(a.ss.Result(i).IDs)
	return nil
}

// sandboxRunner adapts a sandbox.Pool to rollout.ToolRunner; a program that
// exits with an error, times out or is killed counts as a failed call.
type sandboxRunner struct {
	pool *sandbox.Pool
}

func (r sandboxRunner) Run(ctx context.Context, code string) (rollout.ToolOutput, error) {
	res, err := r.pool.Run(ctx, code)
	if err != nil {
		return rollout.ToolOutput{}, err
	}
	failed := res.ExitCode != 0 || res.TimedOut || res.Killed
	return rollout.ToolOutput{Text: res.ToolResponse(), Failed: failed, NoOutput: !failed && res.Stdout == "" && res.Stderr == ""}, nil
}

// NewToolRunner starts the sandbox pool of a run; close releases the pool's
// cgroups once no call runs any more.
func NewToolRunner(cfg Config) (tools rollout.ToolRunner, close func(), isolation string, err error) {
	sc := sandbox.Default()
	sc.Workers = cfg.ToolConcurrency
	sc.Timeout = time.Duration(cfg.ToolTimeout * float64(time.Second))
	sc.CPUSeconds = max(1, int(cfg.ToolTimeout+0.999))
	pool, err := sandbox.NewPool(sc)
	if err != nil {
		return nil, nil, "", fmt.Errorf("grpo: sandbox: %w", err)
	}
	return sandboxRunner{pool: pool}, pool.Close, string(pool.Isolation().Level), nil
}

// NewPolicy returns the run's initial policy: a random model of the tiny_model
// shape (seeded by cfg.Seed), or hf_checkpoint.
func NewPolicy(cfg Config) (*qwen3.Model, error) {
	dtype := dtypes.Float32
	if cfg.DType == "bfloat16" {
		dtype = dtypes.BFloat16
	}
	if cfg.TinyModel != "" {
		mc, err := qwen3.NamedConfig(cfg.TinyModel)
		if err != nil {
			return nil, fmt.Errorf("grpo: %w", err)
		}
		return qwen3.NewRandom(mc, dtype, uint64(cfg.Seed))
	}
	return qwen3.Load(cfg.HFCheckpoint, dtype)
}

// Problem is one prompt of a run: the dataset row's id, text and label.
type Problem struct {
	ID, Text, Answer string
	Trace            *arith.Trace // a warm-start solution, for generated tasks
}

// ArithTasks says which arithmetic tasks to generate.
type ArithTasks struct {
	MaxDigits int    // largest operand length, 1..18
	Ops       string // one of arith.Ops
}

// LoadProblems returns the problems named by spec: "arith" (n tasks of kind
// drawn with seed), a dataset name known to the data package, or a JSONL file.
// Rows without an answer are left out.
func LoadProblems(spec string, n int, seed uint64, kind ArithTasks) ([]Problem, error) {
	if spec == "arith" {
		if !slices.Contains(arith.Ops, kind.Ops) || kind.MaxDigits < 1 || kind.MaxDigits > 18 {
			return nil, fmt.Errorf("grpo: arithmetic tasks of %d digits and ops %q (want 1..18 digits, ops one of %q)", kind.MaxDigits, kind.Ops, arith.Ops)
		}
		prefix := fmt.Sprintf("arith/d%d/%d/", kind.MaxDigits, seed)
		if kind.Ops != "*+" {
			prefix = fmt.Sprintf("arith/d%d%s/%d/", kind.MaxDigits, kind.Ops, seed)
		}
		tasks := arith.Generate(rand.New(rand.NewPCG(seed, 0xa417)), n, kind.MaxDigits, kind.Ops, prefix)
		out := make([]Problem, len(tasks))
		for i, t := range tasks {
			tr := arith.WarmStart(t)
			out[i] = Problem{ID: t.ID, Text: t.Problem, Answer: t.Answer, Trace: &tr}
		}
		return out, nil
	}
	var rows []data.Row
	var err error
	if _, statErr := os.Stat(spec); statErr == nil {
		rows, err = data.ReadFile(spec)
	} else {
		rows, err = data.LoadSet(data.DefaultDir(), spec)
	}
	if err != nil {
		return nil, fmt.Errorf("grpo: prompts %q: %w", spec, err)
	}
	var out []Problem
	for _, r := range rows {
		if r.Answer != nil {
			out = append(out, Problem{ID: r.ID, Text: r.Problem, Answer: *r.Answer})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("grpo: prompts %q: no row has an answer", spec)
	}
	return out, nil
}
