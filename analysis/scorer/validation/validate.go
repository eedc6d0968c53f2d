package validation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/analysis/verify"
	"github.com/mathrl/mathrl/data"
)

// Count is one cell group of the validation table: how one scorer judged the
// constructions of one template on one set.
type Count struct {
	Set     string `json:"set"`     // data set name (data.DefaultSets)
	Scorer  string `json:"scorer"`  // scorer.Names
	Variant string `json:"variant"` // response template (Variants, or a Restatements name)
	Labels  int    `json:"labels"`  // labels in the set (rows with a non-null answer) the template applies to
	TP      int    `json:"tp"`      // labels whose own-label response scored positive
	FP      int    `json:"fp"`      // labels whose partner-label response scored positive
	Errors  int    `json:"errors"`  // labels the scorer could not score (dapo: non-numeric label; verify: deadline)
}

// verdict is one label's outcome for one scorer and template; skip when the
// template does not apply to the label.
type verdict struct{ tp, fp, err, skip bool }

// Labels scores the constructions of every label with every scorer and
// template (Variants), using workers goroutines (0: GOMAXPROCS). Counts come
// in the order template, then scorer (scorer.Names). A scorer error other
// than scorer.ErrNonNumericLabel stops the run.
func Labels(ctx context.Context, set string, labels []string, workers int) ([]Count, error) {
	return score(ctx, set, labels, workers, templates())
}

// Restated is Labels with the Restatements instead of the five templates:
// each label's restatements (TP) and its partner's (FP); a count's Labels are
// the labels its restatement applies to.
func Restated(ctx context.Context, set string, labels []string, workers int) ([]Count, error) {
	return score(ctx, set, labels, workers, Restatements)
}

// score scores every label's constructions in each template.
func score(ctx context.Context, set string, labels []string, workers int, tmpl []Template) ([]Count, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	partners := Partners(labels)
	names := scorer.Names()
	// results[i][v*len(names)+s] is label i's verdict for template v and scorer s.
	results := make([][]verdict, len(labels))
	err := eachLabel(ctx, len(labels), workers, func(i int) error {
		r, err := labelVerdicts(labels, partners, i, names, tmpl)
		results[i] = r
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("validation: %s: %w", set, err)
	}
	var counts []Count
	for v, t := range tmpl {
		for s, name := range names {
			c := Count{Set: set, Scorer: name, Variant: t.Name}
			for _, r := range results {
				x := r[v*len(names)+s]
				if x.skip {
					continue
				}
				c.Labels++
				c.TP += b2i(x.tp)
				c.FP += b2i(x.fp)
				c.Errors += b2i(x.err)
			}
			counts = append(counts, c)
		}
	}
	return counts, nil
}

// eachLabel calls f(i) for i in [0, n) on workers goroutines, until the
// first error or the end of ctx.
func eachLabel(ctx context.Context, n, workers int, f func(int) error) error {
	next := make(chan int)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	var err error
feed:
	for i := range n {
		select {
		case next <- i:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return err
}

// labelVerdicts scores label i's true- and false-positive constructions.
func labelVerdicts(labels []string, partners []int, i int, names []string, tmpl []Template) ([]verdict, error) {
	out := make([]verdict, 0, len(tmpl)*len(names))
	label := scorer.TextLabel(labels[i])
	for _, t := range tmpl {
		tpResp := t.Say(labels[i])
		fpResp := ""
		if partners[i] >= 0 {
			fpResp = t.Say(labels[partners[i]])
		}
		for _, name := range names {
			var v verdict
			var err error
			if tpResp == "" {
				out = append(out, verdict{skip: true})
				continue
			}
			if v.tp, v.err, err = positive(name, tpResp, label); err != nil {
				return nil, err
			}
			if fpResp != "" {
				var labelErr bool
				if v.fp, labelErr, err = positive(name, fpResp, label); err != nil {
					return nil, err
				}
				v.err = v.err || labelErr
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// positive scores resp against label with the scorer name: ok says the reward
// is positive, labelErr that the scorer could not score it (dapo's
// scorer.ErrNonNumericLabel, verify past its deadline); any other scorer
// error is returned.
func positive(name, resp string, label scorer.Label) (ok, labelErr bool, err error) {
	r, err := scorer.ScoreLabel(name, resp, label)
	switch {
	case errors.Is(err, scorer.ErrNonNumericLabel), errors.Is(err, verify.ErrDeadline):
		return false, true, nil
	case err != nil:
		return false, false, err
	}
	return r.Reward > 0, false, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Options says what Run validates.
type Options struct {
	Dir     string    // data folder
	Pull    bool      // fetch missing sets with data.Pull before validating
	Workers int       // 0: GOMAXPROCS
	Log     io.Writer // progress lines; nil: none
}

// Run validates every set of data.DefaultSets whose file is in opts.Dir (after
// pulling the missing ones when opts.Pull is set), in that order. It is
// an error when no set is found.
func Run(ctx context.Context, opts Options) ([]Count, error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	if opts.Pull {
		var missing []string
		for _, s := range data.DefaultSets() {
			if _, err := os.Stat(s.Path(opts.Dir)); err != nil {
				missing = append(missing, s.Name)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(log, "pulling %d missing set(s) into %s\n", len(missing), opts.Dir)
			if err := data.Pull(ctx, data.PullOptions{Dir: opts.Dir, Sets: missing, Progress: log}); err != nil {
				return nil, fmt.Errorf("validation: %w", err)
			}
		}
	}
	var counts []Count
	for _, s := range data.DefaultSets() {
		if _, err := os.Stat(s.Path(opts.Dir)); err != nil {
			continue
		}
		rows, err := data.ReadFile(s.Path(opts.Dir))
		if err != nil {
			return nil, fmt.Errorf("validation: %w", err)
		}
		var labels []string
		for _, r := range rows {
			if r.Answer != nil {
				labels = append(labels, *r.Answer)
			}
		}
		fmt.Fprintf(log, "%s: %d labels\n", s.Name, len(labels))
		c, err := Labels(ctx, s.Name, labels, opts.Workers)
		if err != nil {
			return nil, err
		}
		r, err := Restated(ctx, s.Name, labels, opts.Workers)
		if err != nil {
			return nil, err
		}
		counts = append(append(counts, c...), r...)
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("validation: no data set found in %s (run `mathrl data pull`)", opts.Dir)
	}
	return counts, nil
}
