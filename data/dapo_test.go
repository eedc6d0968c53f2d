package data

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadDAPO(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []Row
	}{
		{"dapo_slime.jsonl", []Row{
			{ID: "1", Problem: "Solve the following math problem step by step.\n\nWhat is $1+1$?\n\nRemember to put your answer on its own line after \"Answer:\".",
				Answer: ptr("2"), Source: "dapo"},
			{ID: "2", Problem: `Compute $\frac{3}{4}+\frac14$.`, Answer: ptr("1"), Source: "dapo"},
			{ID: "3", Problem: "What is $2^{10}$?", Answer: ptr("1024"), Source: "dapo"},
		}},
		{"dapo_verl.jsonl", []Row{
			{ID: "9a9b6eb4-a1cb-49d1-8c1e-62eaf2f74079", Problem: "Find $x$ if $2x=10$.", Answer: ptr("5"), Source: "math_dapo"},
			{ID: "17", Problem: "How many primes are below 10?", Answer: ptr("4"), Source: "math_dapo"},
			{ID: "3", Problem: `What is $3\cdot 7$?`, Answer: ptr("21"), Source: "dapo"},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rows, err := ReadDAPOFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rows, tc.want) {
				t.Errorf("ReadDAPOFile(%s):\n got %+v\nwant %+v", tc.file, rows, tc.want)
			}
		})
	}
}

func TestReadDAPOBadRows(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
	}{
		{"no prompt", `{"label": "1"}`, `d.jsonl:1: field "prompt": missing`},
		{"numeric prompt", `{"prompt": 5, "label": "1"}`, `d.jsonl:1: field "prompt": want a list of chat messages or a string, got 5`},
		{"no user message", `{"prompt": [{"role": "system", "content": "hi"}], "label": "1"}`, `d.jsonl:1: field "prompt": no user message`},
		{"two user messages", `{"prompt": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "label": "1"}`,
			`d.jsonl:1: field "prompt[1]": a second user message (the first is prompt[0])`},
		{"message without role", `{"prompt": [{"content": "a"}], "label": "1"}`, `d.jsonl:1: field "prompt[0].role": missing`},
		{"message without content", `{"prompt": [{"role": "user"}], "label": "1"}`, `d.jsonl:1: field "prompt[0].content": missing`},
		{"empty user content", `{"prompt": [{"role": "user", "content": ""}], "label": "1"}`, `d.jsonl:1: field "prompt[0].content": empty`},
		{"no label", `{"prompt": "p"}`, `d.jsonl:1: field "label": missing (and no reward_model.ground_truth)`},
		{"numeric label", `{"prompt": "p", "label": 3}`, `d.jsonl:1: field "label": want a string, got a number`},
		{"empty label", `{"prompt": "p", "label": ""}`, `d.jsonl:1: field "label": empty`},
		{"reward_model not object", `{"prompt": "p", "reward_model": "3"}`, `d.jsonl:1: field "reward_model": want an object, got "3"`},
		{"no ground_truth", `{"prompt": "p", "reward_model": {"style": "rule"}}`, `d.jsonl:1: field "reward_model.ground_truth": missing`},
		{"list ground_truth", `{"prompt": "p", "reward_model": {"ground_truth": ["72"]}}`, `d.jsonl:1: field "reward_model.ground_truth": want a string, got an array`},
		{"bad index", `{"prompt": "p", "label": "1", "extra_info": {"index": 1.5}}`, `d.jsonl:1: field "extra_info.index": want a string or an integer, got 1.5`},
		{"extra_info not object", `{"prompt": "p", "label": "1", "extra_info": 3}`, `d.jsonl:1: field "extra_info": want an object, got 3`},
		{"numeric data_source", `{"prompt": "p", "label": "1", "data_source": 1}`, `d.jsonl:1: field "data_source": want a string, got a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadDAPO(strings.NewReader(tc.line+"\n"), "d.jsonl")
			if err == nil || err.Error() != "data: "+tc.want {
				t.Errorf("ReadDAPO(%q) error\n got %v\nwant %q", tc.line, err, "data: "+tc.want)
			}
		})
	}
}

func TestReadDAPODuplicateIndex(t *testing.T) {
	in := `{"prompt": "a", "label": "1", "extra_info": {"index": "2"}}` + "\n" + `{"prompt": "b", "label": "1"}` + "\n"
	_, err := ReadDAPO(strings.NewReader(in), "d.jsonl")
	want := `data: d.jsonl:2: field "extra_info.index": "2" already used on line 1`
	if err == nil || err.Error() != want {
		t.Errorf("ReadDAPO with a clashing id: error %v, want %q", err, want)
	}
}
