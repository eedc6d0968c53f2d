package grpo

import (
	"context"
	"slices"
	"testing"

	"github.com/mathrl/mathrl/analysis/rollouts"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

// TestTrainRecordsRollouts trains a tiny model, recording every rollout's batch, and
// checks the records against what the loss was handed (the OnRollout hook's
// sequences) and against the tool protocol: the tokens with mask 0 are
// exactly the tool-response turns that the tokenizer's Protocol renders for
// each call the sampled text makes.
func TestTrainRecordsRollouts(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := smokeConfig(t)
	cfg.SFTSteps, cfg.SFTUnprintedFraction, cfg.SaveRolloutsEvery, cfg.SaveRolloutsGroups, cfg.EvalPromptData = 60, 0, 1, 0, ""
	cfg.RolloutMaxResponseLen = 112 // room for a call (about 70 tokens) and its response
	var logs []RolloutLog
	var log testLog
	opt := TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log,
		OnRollout: func(l RolloutLog) { logs = append(logs, l) }}
	if err := Train(context.Background(), cfg, opt); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	steps, err := rollouts.Steps(cfg.Save)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, cfg.StepsPerRollout()}; !slices.Equal(steps, want) {
		t.Fatalf("recorded steps %v, want %v", steps, want)
	}
	tok, _, err := tokenizer.Open(cfg.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	proto, err := tokenizer.NewProtocol(tok, cfg.SystemPrompt, cfg.UseTools, cfg.OfferToolSpec)
	if err != nil {
		t.Fatal(err)
	}
	injected := 0
	for k, step := range steps {
		recs, err := rollouts.Load(cfg.Save, step)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != cfg.Samples() || len(logs[k].Sequences) != cfg.Samples() {
			t.Fatalf("step %d: %d records, %d sequences, want %d", step, len(recs), len(logs[k].Sequences), cfg.Samples())
		}
		for i, rec := range recs {
			seq := logs[k].Sequences[i]
			if !slices.Equal(rec.ResponseIDs, seq.Response) || !slices.Equal(rec.Mask, seq.Mask) ||
				!slices.Equal(rec.LogProbs, seq.LogProbs) || rec.Advantage != seq.Advantage || !slices.Equal(rec.PromptIDs, seq.Prompt) {
				t.Errorf("step %d sample %d: the record differs from the sequence the loss took", step, i)
			}
			if rec.TrainStep != step+1+i/cfg.GlobalBatchSize || rec.Reward != logs[k].Rewards[i] {
				t.Errorf("step %d sample %d: train step %d, reward %g; want %d, %g", step, i, rec.TrainStep, rec.Reward, step+1+i/cfg.GlobalBatchSize, logs[k].Rewards[i])
			}
			want := protocolMask(t, proto, rec.ResponseIDs, cfg.MaxTurns)
			if !slices.Equal(rec.Mask, want) {
				t.Errorf("step %d sample %d: mask\n%v\nthe protocol's\n%v\ntext %q", step, i, rec.Mask, want, proto.Decode(rec.ResponseIDs))
			}
			injected += slices.Index(want, 0) + 1 // > 0 when the sample has an injected token
		}
	}
	if injected == 0 {
		t.Fatal("no recorded sample called the tool: the check of injected tokens saw none")
	}
}

// protocolMask rebuilds the loss mask of response ids from the protocol
// alone: every turn the model samples runs to </tool_call> (or the end); a
// call that is not the last token and not over maxTurns is followed by the
// tool-response turn Protocol.ToolResponseIDs renders for what arithTools
// answers (or the parse error), cut at the end of the response.
func protocolMask(t *testing.T, proto *tokenizer.Protocol, ids []int, maxTurns int) []float32 {
	t.Helper()
	end := proto.Tok.Special().ToolCallEnd
	mask := make([]float32, 0, len(ids))
	for pos, calls := 0, 0; pos < len(ids); calls++ {
		e := slices.Index(ids[pos:], end)
		if e < 0 || pos+e == len(ids)-1 || calls == maxTurns {
			for range ids[pos:] {
				mask = append(mask, 1)
			}
			break
		}
		turn := ids[pos : pos+e+1]
		for range turn {
			mask = append(mask, 1)
		}
		var response string
		code, err := proto.ParseToolCall(proto.Decode(turn))
		if err != nil {
			response = err.Error()
		} else {
			out, _ := arithTools{}.Run(context.Background(), code)
			response = out.Text
		}
		resp := proto.ToolResponseIDs(response)
		pos += len(turn)
		resp = resp[:min(len(resp), len(ids)-pos)]
		if !slices.Equal(ids[pos:pos+len(resp)], resp) {
			t.Fatalf("after a tool call: ids %v, the protocol's tool response %v", ids[pos:pos+len(resp)], resp)
		}
		for range resp {
			mask = append(mask, 0)
		}
		pos += len(resp)
	}
	return mask
}
