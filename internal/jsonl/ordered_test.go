package jsonl

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestOrderedEdits(t *testing.T) {
	type set struct {
		key   string
		value any
	}
	for _, tc := range []struct {
		name, in string
		set      []set
		del      []string
		want     string
	}{
		{"keys keep their order", `{"z":1,"a":2,"m":3}`, []set{{"b", 4}}, nil, `{"z":1,"a":2,"m":3,"b":4}`},
		{"new value not HTML-escaped", `{"k":1}`, []set{{"text", "hi<|im_end|>&"}}, nil, `{"k":1,"text":"hi<|im_end|>&"}`},
		{"existing bytes kept", `{ "n" : 1.0e0 , "s":"\u003c|x|\u003e", "l":[1, 2] }`, []set{{"t", true}}, nil,
			`{"n":1.0e0,"s":"\u003c|x|\u003e","l":[1, 2],"t":true}`},
		{"escaped name kept", `{"\u0041b":1}`, []set{{"Ab", 2}}, nil, `{"\u0041b":2}`},
		{"replace in place", `{"a":1,"score":7,"b":2}`, []set{{"score", 0}}, nil, `{"a":1,"score":0,"b":2}`},
		{"several, in the order set", `{}`, []set{{"y", []int{1}}, {"x", nil}, {"y", "two"}}, nil, `{"y":"two","x":null}`},
		{"delete then add", `{"a":1,"error":"old","b":2}`, []set{{"score", 1}}, []string{"error", "missing"}, `{"a":1,"b":2,"score":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseOrdered([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.del {
				o.Delete(k)
			}
			for _, s := range tc.set {
				if err := o.Set(s.key, s.value); err != nil {
					t.Fatal(err)
				}
			}
			var b strings.Builder
			if err := o.WriteLine(&b); err != nil || b.String() != tc.want+"\n" {
				t.Errorf("edited %s: got %q, %v; want %q", tc.in, b.String(), err, tc.want+"\n")
			}
		})
	}
}

func TestOrderedGetAndMap(t *testing.T) {
	o, err := ParseOrdered([]byte(`{"text":"a<b","n":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := o.Get("n"); !ok || string(v) != "3" {
		t.Errorf(`Get("n") = %s, %v; want 3, true`, v, ok)
	}
	if _, ok := o.Get("x"); ok {
		t.Error(`Get("x") found a missing field`)
	}
	if s, err := String(o.Map(), "text"); err != nil || s != "a<b" {
		t.Errorf(`String(Map(), "text") = %q, %v`, s, err)
	}
}

func TestOrderedBadInput(t *testing.T) {
	for _, tc := range []struct{ in, want, field string }{
		{`[1,2]`, "not a JSON object", ""},
		{`null`, "not a JSON object", ""},
		{`{"a":1`, "not a JSON object", ""},
		{`{"a":1} {}`, "extra data after the JSON object", ""},
		{`{"a":1}x`, "extra data after the JSON object", ""},
		{`{"a":1,"b":tru}`, "bad JSON value", "b"},
		{`{"a":1,"a":2}`, "repeated", "a"},
	} {
		_, err := ParseOrdered([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseOrdered(%q) err = %v, want %q", tc.in, err, tc.want)
			continue
		}
		var fe *FieldError
		if got := ""; errors.As(err, &fe) {
			got = fe.Field
			if got != tc.field {
				t.Errorf("ParseOrdered(%q): field %q, want %q", tc.in, got, tc.field)
			}
		} else if tc.field != "" {
			t.Errorf("ParseOrdered(%q): err %v names no field, want %q", tc.in, err, tc.field)
		}
	}
	o, _ := ParseOrdered([]byte(`{"a":1}`))
	var fe *FieldError
	if err := o.Set("x", math.NaN()); !errors.As(err, &fe) || fe.Field != "x" {
		t.Errorf("Set(NaN) err = %v, want a FieldError for x", err)
	}
	if got := string(o.Bytes()); got != `{"a":1}` {
		t.Errorf("after a failed Set: %s, want the object unchanged", got)
	}
}
