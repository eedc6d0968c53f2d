package notebooks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// notebook is the part of the nbformat 4 JSON that the checks read.
type notebook struct {
	Cells []cell `json:"cells"`
}

type cell struct {
	CellType string          `json:"cell_type"`
	Source   multiline       `json:"source"`
	Outputs  []output        `json:"outputs"`
	Metadata json.RawMessage `json:"metadata"`
}

type output struct {
	OutputType string               `json:"output_type"` // stream, display_data, execute_result, error
	Name       string               `json:"name"`        // stdout or stderr, for streams
	Text       multiline            `json:"text"`
	Data       map[string]multiline `json:"data"`
	EName      string               `json:"ename"`
	EValue     string               `json:"evalue"`
}

// multiline is nbformat's text: a string or a list of lines.
type multiline string

func (m *multiline) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*m = multiline(s)
		return nil
	}
	var lines []string
	if err := json.Unmarshal(b, &lines); err != nil {
		// image data and other non-text payloads are not needed as text
		*m = ""
		return nil
	}
	*m = multiline(strings.Join(lines, ""))
	return nil
}

// CellError says which cell of which notebook failed and why.
type CellError struct {
	Notebook string // file name
	Cell     int    // 1-based index among all cells, as Jupyter shows them
	First    string // first telling line of the cell's source
	Reason   string
}

// Error names the notebook, the cell and the reason.
func (e *CellError) Error() string {
	return fmt.Sprintf("notebooks: %s: cell %d (%q): %s", e.Notebook, e.Cell, e.First, e.Reason)
}

var (
	exitStatus = regexp.MustCompile(`(?m)^exit status (\d+)\s*$`)
	panicLine  = regexp.MustCompile(`(?m)^panic: `)
)

// silentAllowed reports whether a code cell may produce no output: a cell
// without a main part (no %% line and no func main) only declares, or runs
// GoNB special commands (!, %).
func silentAllowed(src string) bool {
	for _, line := range strings.Split(src, "\n") {
		if l := strings.TrimSpace(line); l == "%%" || strings.HasPrefix(l, "func main()") {
			return false
		}
	}
	return true
}

// Check reads an executed notebook and returns a *CellError for its first
// failed cell, or an error if it holds no image at all (every notebook here
// shows figures); nil when it passed.
func Check(name string, executed []byte) error {
	var nb notebook
	if err := json.Unmarshal(executed, &nb); err != nil {
		return fmt.Errorf("notebooks: %s: not a notebook: %w", name, err)
	}
	images := 0
	for i, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		src := string(c.Source)
		fail := func(reason string) error {
			return &CellError{Notebook: name, Cell: i + 1, First: firstCodeLine(src), Reason: reason}
		}
		for _, o := range c.Outputs {
			switch o.OutputType {
			case "error":
				return fail(fmt.Sprintf("%s: %s", o.EName, strings.TrimSpace(o.EValue)))
			case "stream":
				if o.Name != "stderr" {
					continue
				}
				text := string(o.Text)
				if m := panicLine.FindStringIndex(text); m != nil {
					return fail("runtime panic: " + firstLine(text[m[0]:]))
				}
				if m := exitStatus.FindStringSubmatch(text); m != nil && m[1] != "0" {
					return fail(fmt.Sprintf("exit status %s: %s", m[1], tail(text, 5)))
				}
			case "display_data", "execute_result":
				if _, ok := o.Data["image/png"]; ok {
					images++
				}
				if _, ok := o.Data["image/svg+xml"]; ok {
					images++
				}
			}
		}
		if len(visible(c.Outputs)) == 0 && !silentAllowed(src) {
			return fail("produced no output")
		}
	}
	if images == 0 {
		return fmt.Errorf("notebooks: %s: shows no figure", name)
	}
	return nil
}

// visible returns the outputs a reader sees as results: anything but stderr.
func visible(outs []output) []output {
	var v []output
	for _, o := range outs {
		if o.OutputType == "stream" && o.Name == "stderr" {
			continue
		}
		v = append(v, o)
	}
	return v
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

// tail returns the last n non-empty lines of s, joined by " | ".
func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// firstCodeLine returns the first line of src that says something: not
// blank, not the %% marker, not an import line.
func firstCodeLine(src string) string {
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && l != "%%" && !strings.HasPrefix(l, "import") && l != ")" && !strings.HasPrefix(l, "\"") {
			return l
		}
	}
	return strings.TrimSpace(src)
}
