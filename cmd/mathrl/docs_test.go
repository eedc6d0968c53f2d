package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// docFiles returns the documents whose links and command lines the tests
// below keep honest, relative to the repository root.
func docFiles(t *testing.T, repo fs.FS) []string {
	t.Helper()
	files, err := fs.Glob(repo, "docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md", "configs/README.md"}, files...)
}

// TestDocsLinks checks every relative link of README.md, configs/README.md and
// docs/*.md: its file exists and, for an anchor into a markdown file, so does
// the heading.
func TestDocsLinks(t *testing.T) {
	repo := os.DirFS(filepath.Join("..", ".."))
	for _, file := range docFiles(t, repo) {
		for _, problem := range checkLinks(repo, file) {
			t.Error(problem)
		}
	}
}

// TestReadmeCommandLines parses every mathrl command line of the code blocks
// of README.md and docs/*.md with the real command tree: the subcommand must
// exist and its flags must parse. Nothing is run.
func TestReadmeCommandLines(t *testing.T) {
	repo := os.DirFS(filepath.Join("..", ".."))
	for _, file := range docFiles(t, repo) {
		data, err := fs.ReadFile(repo, file)
		if err != nil {
			t.Fatal(err)
		}
		lines := commandLines(string(data))
		if file == "README.md" && len(lines) == 0 {
			t.Errorf("%s: no mathrl command line found in its code blocks", file)
		}
		for _, c := range lines {
			if err := parseCommandLine(c.args); err != nil {
				t.Errorf("%s:%d: %s: %v", file, c.line, c.text, err)
			}
		}
	}
}

// TestLinkCheckerFails shows that checkLinks reports each kind of broken link
// and passes good ones.
func TestLinkCheckerFails(t *testing.T) {
	repo := fstest.MapFS{
		"docs/b.md":    {Data: []byte("# B\n\n## The `serve` command (HTTP)\n\n## Twice\n\n## Twice\n")},
		"configs/x.go": {Data: []byte("package x\n")},
	}
	for _, tc := range []struct {
		name, text, want string
	}{
		{"a file and a heading", "[b](docs/b.md#the-serve-command-http) [x](configs/x.go) [d](docs/)", ""},
		{"a duplicate heading", "[b](docs/b.md#twice-1)", ""},
		{"a web link", "[w](https://example.com/none.md#none)", ""},
		{"an anchor in the same file", "## Here\n\nsee [here](#here)", ""},
		{"a link in code", "`[a](missing.md)`\n\n```\n[a](missing.md)\n```", ""},
		{"a missing file", "text\n[a](docs/missing.md)", `README.md:2: link "docs/missing.md": no file docs/missing.md`},
		{"a missing heading", "[b](docs/b.md#the-serve-command)", `README.md:1: link "docs/b.md#the-serve-command": docs/b.md has no heading #the-serve-command`},
		{"a missing local heading", "## Here\n[h](#there)", `README.md:2: link "#there": README.md has no heading #there`},
		{"outside the repository", "[u](../up.md)", `README.md:1: link "../up.md": it leaves the repository`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo["README.md"] = &fstest.MapFile{Data: []byte(tc.text)}
			got := strings.Join(checkLinks(repo, "README.md"), "\n")
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCommandLineCheckerFails shows that commandLines finds the command lines
// of a code block and parseCommandLine refuses an unknown flag or subcommand.
func TestCommandLineCheckerFails(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		lines      int // command lines found
		want       string
	}{
		{"good lines", "```sh\n$ mathrl train --config demo   # the demo\ngo run ./cmd/mathrl plan \\\n  --devices 8 --sharding fsdp\n" +
			"MATHRL_DATA_MIRROR=DIR mathrl data pull --set NAME\nmathrl eval --data NAME|FILE --model DIR > out.txt\n```", 4, ""},
		{"prose and other languages", "mathrl train --nope\n\n```go\nmathrl train --nope\n```", 0, ""},
		{"an unknown flag", "```\n\nmathrl train --no-such-flag\n```", 1, "3: unknown flag: --no-such-flag"},
		{"a flag of another command", "```sh\nmathrl serve \\\n  --model DIR --devices 8\n```", 1, "2: unknown flag: --devices"},
		{"an unknown subcommand", "```bash\nmathrl trian --config demo\n```", 1, "2: unknown command \"trian\" for \"mathrl\"\n\nDid you mean this?\n\ttrain\n"},
		{"an unknown sub-subcommand", "```\nmathrl data fetch\n```", 1, `2: unknown command "fetch" for "mathrl data"`},
		{"a bad flag value", "```\nmathrl train --num-rollout many\n```", 1, `2: invalid argument "many" for "--num-rollout" flag: strconv.ParseInt: parsing "many": invalid syntax`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := commandLines(tc.text)
			if len(lines) != tc.lines {
				t.Errorf("found %d command lines, want %d: %+v", len(lines), tc.lines, lines)
			}
			var got []string
			for _, c := range lines {
				if err := parseCommandLine(c.args); err != nil {
					got = append(got, fmt.Sprintf("%d: %v", c.line, err))
				}
			}
			if s := strings.Join(got, "\n"); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}
}

// linkPattern matches a markdown link or image, [text](target).
var linkPattern = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]*)\)`)

// checkLinks returns one message, naming file, line and link, for each
// relative link in the markdown file that points at a missing file, a missing
// heading of a markdown file, or out of the repository. Links inside code are
// not links and are skipped.
func checkLinks(repo fs.FS, file string) []string {
	data, err := fs.ReadFile(repo, file)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for n, line := range proseLines(string(data)) {
		for _, m := range linkPattern.FindAllStringSubmatchIndex(line, -1) {
			if insideCode(line, m[0]) {
				continue
			}
			link := line[m[2]:m[3]]
			if err := checkLink(repo, file, link); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q: %v", file, n+1, link, err))
			}
		}
	}
	return problems
}

// checkLink checks one link of file: nil for a link with a scheme (http, mailto),
// else its file must exist and its anchor, if any, be a heading of it.
func checkLink(repo fs.FS, file, link string) error {
	if strings.Contains(link, ":") {
		return nil
	}
	target, anchor, _ := strings.Cut(link, "#")
	target, err := url.PathUnescape(target)
	if err != nil {
		return err
	}
	if target == "" {
		target = file
	} else {
		target = path.Join(path.Dir(file), target)
	}
	if !fs.ValidPath(target) {
		return fmt.Errorf("it leaves the repository")
	}
	if _, err := fs.Stat(repo, target); err != nil {
		return fmt.Errorf("no file %s", target)
	}
	if anchor == "" || path.Ext(target) != ".md" {
		return nil
	}
	data, err := fs.ReadFile(repo, target)
	if err != nil {
		return err
	}
	if !headingSlugs(string(data))[anchor] {
		return fmt.Errorf("%s has no heading #%s", target, anchor)
	}
	return nil
}

// proseLines returns the lines of a markdown text with those of fenced code
// blocks (and the fences) blanked, so that line numbers stay.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	inFence := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			lines[i] = ""
		} else if inFence {
			lines[i] = ""
		}
	}
	return lines
}

// insideCode reports whether byte i of line lies inside an inline code span.
func insideCode(line string, i int) bool {
	return strings.Count(line[:i], "`")%2 == 1
}

// headingSlugs returns the anchors GitHub gives the headings of a markdown
// text: lower case, punctuation other than - and _ dropped, spaces made -,
// and -1, -2, ... added to repeats.
func headingSlugs(text string) map[string]bool {
	slugs := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		if hashes == 0 || hashes > 6 || !strings.HasPrefix(line[hashes:], " ") {
			continue
		}
		slug := slugify(line[hashes+1:])
		if n := seen[slug]; n > 0 {
			slugs[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			slugs[slug] = true
		}
		seen[slug]++
	}
	return slugs
}

// slugify makes a heading's text into its GitHub anchor; a link in the
// heading counts by its text only.
func slugify(heading string) string {
	heading = linkPattern.ReplaceAllStringFunc(heading, func(link string) string {
		return link[1:strings.Index(link, "](")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// A commandLine is a mathrl command found in a code block: the line it starts
// on, its text and its arguments after `mathrl`.
type commandLine struct {
	line int
	text string
	args []string
}

// commandLines returns the mathrl command lines of the shell code blocks
// (```sh, ```bash, ```console or plain ```) of a markdown text: each line
// that, after a leading `$ ` and environment assignments, starts with
// `mathrl ` or `go run ./cmd/mathrl `, with `\` continuations joined and a
// trailing `# comment` and anything after a shell operator dropped.
func commandLines(text string) []commandLine {
	var found []commandLine
	lines := strings.Split(text, "\n")
	inShell, inFence := false, false
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "```") {
			lang := strings.TrimPrefix(line, "```")
			inShell = !inFence && (lang == "" || lang == "sh" || lang == "bash" || lang == "shell" || lang == "console")
			inFence = !inFence
			continue
		}
		if !inShell {
			continue
		}
		start := i
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if args, ok := mathrlArgs(shellWords(strings.TrimPrefix(line, "$ "))); ok {
			found = append(found, commandLine{start + 1, line, args})
		}
	}
	return found
}

var (
	envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	shellOperator = regexp.MustCompile(`^(\|\|?|&&?|;|[0-9]*[<>]+&?[0-9]*)$`)
)

// mathrlArgs returns the arguments after `mathrl` (or `go run ./cmd/mathrl`)
// of a command's words, leading VAR=value assignments skipped.
func mathrlArgs(words []string) ([]string, bool) {
	for len(words) > 0 && envAssignment.MatchString(words[0]) {
		words = words[1:]
	}
	switch {
	case len(words) > 0 && words[0] == "mathrl":
		return words[1:], true
	case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/mathrl":
		return words[3:], true
	}
	return nil, false
}

// shellWords splits a shell command line into words, honouring single and
// double quotes, and stops at an unquoted comment or a shell operator standing
// as a word of its own (|, ||, &&, ;, >, 2>&1, ...).
func shellWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range line + " " {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			return words
		case unicode.IsSpace(r):
			if inWord {
				if shellOperator.MatchString(word.String()) {
					return words
				}
				words = append(words, word.String())
			}
			word.Reset()
			inWord = false
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	return words
}

// parseCommandLine finds the subcommand args name in a fresh command tree and
// parses its flags, without running it: an unknown subcommand or flag, or a
// flag value that does not parse, is an error.
func parseCommandLine(args []string) error {
	root := newRootCmd()
	root.InitDefaultHelpCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	positional := cmd.Flags().Args()
	if cmd.HasSubCommands() && !cmd.Runnable() && len(positional) > 0 {
		return fmt.Errorf("unknown command %q for %q", positional[0], cmd.CommandPath())
	}
	return cmd.ValidateArgs(positional)
}
